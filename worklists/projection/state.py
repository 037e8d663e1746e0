"""The projection's two value types: a patient's folded state and a view row.

Both the rules (events → state) and the row building (state → rows) use them; neither
imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RowKey = tuple[str, str, str]  # (view, bucket, row id)
# The shape of the tracker's state and of the rows built from it. A tracker of an older
# shape lacks what newer views need, or owns rows of an older format: the guard rebuilds its
# state from the source record instead of folding onto it, and every row is written again.
# 2: medications due, results to review. 3: name rows carry the folded given name.
# 4: patients by year of birth. 5: medication rows carry the order's schedule (standard
# local dose times) and answer dose times by their minute. 6: ward stays (the census).
# 7: the allergy flag and open handover notes ("My patients"). 8: the observations'
# summary (observations due, patients at risk). 9: the allergies' names and who took over
# the recent handover notes ("My patients" reads no record).
SHAPE = 9


@dataclass(frozen=True)
class PatientState:
    """What the views need of one patient as of stream sequence ``seq``.

    Trackers store :meth:`as_json`; its shape is kept stable across releases.
    """

    patient_id: str
    seq: int = 0
    patient: dict[str, Any] | None = None
    admission: dict[str, Any] | None = None
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)  # active ones
    # Results not yet acknowledged, by order id (they outlive the order and the admission).
    reviews: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Every ward stay of every admission, oldest first (worklists.projection.census).
    stays: list[dict[str, Any]] = field(default_factory=list)
    # The allergy flag's inputs: active allergies by id ({substance, severity}: what names
    # them, in the order they are listed), and a recorded "no known allergies".
    allergies: dict[str, dict[str, Any]] = field(default_factory=dict)
    no_known_allergies: bool = False
    # Handover notes not yet acknowledged, by handover id (the shift they hand over).
    handovers: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The newest notes taken over (acknowledged), by handover id: {shift, by} (who).
    taken: dict[str, dict[str, Any]] = field(default_factory=dict)
    # What the observations amount to (patients.domain.observation_summary); None: no set.
    observations: dict[str, Any] | None = None
    shape: int = SHAPE

    def as_json(self) -> dict[str, Any]:
        return {"patientId": self.patient_id, "seq": self.seq, "shape": self.shape,
                "patient": self.patient, "admission": self.admission, "orders": self.orders,
                "reviews": self.reviews, "stays": self.stays,
                "allergies": self.allergies,
                "noKnownAllergies": self.no_known_allergies, "handovers": self.handovers,
                "taken": self.taken,
                "observations": self.observations}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PatientState:
        return cls(patient_id=data["patientId"], seq=int(data["seq"]), patient=data.get("patient"),
                   admission=data.get("admission"), orders=dict(data.get("orders") or {}),
                   reviews=dict(data.get("reviews") or {}),
                   stays=list(data.get("stays") or ()),
                   allergies=dict(data.get("allergies") or {}),
                   no_known_allergies=bool(data.get("noKnownAllergies")),
                   handovers=dict(data.get("handovers") or {}),
                   taken=dict(data.get("taken") or {}),
                   observations=data.get("observations"),
                   shape=int(data.get("shape", 1)))


@dataclass(frozen=True)
class Row:
    """One row of one view bucket: display ``contents`` and the indexed ``query`` fields."""

    view: str
    bucket: str
    row_id: str
    contents: dict[str, Any]
    query: dict[str, Any]  # top-level Query* fields: the only indexed paths

    @property
    def key(self) -> RowKey:
        return (self.view, self.bucket, self.row_id)
