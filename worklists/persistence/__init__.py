"""Storage of the views: the only worklists package that knows document envelopes.

View rows, per-patient trackers, the generation pointer and dead letters are mapped to and
from store documents here; the patients' events are found in the change feed and read by id
here; the source record comes from ``patients.persistence.snapshots``. :mod:`.writer`
applies the projection rules to a patient's rows and tracker, version-guarded. Everything
above this package works with rows, states, dataclasses and plain dicts.
"""
