"""Storage of the views: the only worklists package that knows document envelopes.

View rows, per-patient trackers, the generation pointer and dead letters are mapped to and
from store documents here; the patients' events are found in the change feed and read by id
here; the source record comes from ``patients.persistence.snapshots``. :mod:`.writer`
applies the projection rules to a patient's rows and tracker, version-guarded. Everything
above this package works with rows, states, dataclasses and plain dicts.
"""

# The partitions this package writes, all in the views container (hisadmin.core.store):
# the generation pointer (generations.META_PK), dead letters (deadletters.DEAD_LETTERS_PK),
# trackers (trackers: V_Track_g<gen>_<bucket>, and the older V_Track_<patientId>) and view
# rows (view_rows: V_<View>_g<gen>_<bucket>, and a ward's lists together in V_Ward_g<gen>_<ward>).
VIEW_PARTITIONS = (r"V_Meta$", r"V_DeadLetters$", r"V_Track_", r"V_[A-Za-z]+_g\d+_")
