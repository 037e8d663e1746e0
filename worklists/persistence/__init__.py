"""The worklists' documents: the only worklists package that knows envelopes.

View rows, per-patient trackers, the generation pointer and dead letters are mapped to and
from store documents here; the change feed and the patients' events are read here; the
source record comes from ``patients.persistence.snapshots``. Everything above this package
works with rows, states and plain dicts.
"""
