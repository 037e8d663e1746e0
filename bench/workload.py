"""The benchmark's hospital: a deterministic plan both systems are seeded from.

Pure Python (no Django): the same seed gives the same patients, stays and orders, so the
product (seeded through its use cases) and the baseline (seeded with ``bulk_create``) hold the
same data. Shapes follow the domain: departments with wards and beds, patients with
allergies, past stays (ended, with completed or cancelled orders) and, for some, a current
stay whose orders are still active, some assigned to the nurse whose worklist is polled.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

DEPARTMENTS = ("CARD", "MED", "SURG", "PAED")
# Wards added to the product's reference data so the census is a real hospital's size
# (a 600-bed hospital): the six demo wards alone hold 42 beds.
WARDS_PER_DEPARTMENT = 5
BEDS_PER_WARD = 30
OCCUPANCY = 0.85  # share of beds taken by seeded current stays, at most
CURRENT_STAY_SHARE = 0.3  # share of patients in hospital now, before the bed cap
PAST_STAY_SHARE = 0.4  # share of patients with one ended stay in the record
ALLERGY_SHARE = 0.3
NURSE = "nurse"  # whose My Orders worklist the driver reads

GIVEN = ("María", "John", "Aiko", "Oluwaseun", "Émile", "Fatima", "Lars", "Mia", "Chen",
         "Sofia", "Noah", "Zoë", "Ana", "Pedro", "Lucía", "Omar", "Ingrid", "Raj", "Yuki",
         "Kofi", "Léa", "Hugo", "Nina", "Ivan", "Sara", "Tomás", "Amara", "Jonas", "Elif",
         "Mateo")
_SYLLABLES = ("gar", "ci", "lo", "pez", "smi", "th", "tan", "aka", "ade", "yemi", "du",
              "rand", "khan", "ov", "er", "gaard", "mül", "ler", "wei", "ros", "si", "bro",
              "wn", "jans", "sen", "ibá", "ñez", "mar", "tín", "no", "va", "kow", "ski")
SUBSTANCES = ("Penicillin", "Latex", "Peanut", "Iodine contrast", "Aspirin", "Sulfonamide")
MEDICATIONS = (("PARA", "mg", "PO", "Q6H", "1000"), ("AMOX", "mg", "PO", "Q8H", "500"),
               ("FURO", "mg", "IV", "QAM", "40"), ("ENOX", "mg", "SC", "Q24H", "40"),
               ("MORPH", "mg", "SC", "Q4H", "5"), ("INSUL", "units", "SC", "Q24H", "10"))
IMAGING = (("CR", "CHEST"), ("CT", "HEAD"), ("CT", "ABDOMEN"), ("MR", "SPINE"),
           ("US", "ABDOMEN"))
LABS = ("CBC", "BMP", "CRP", "TROP", "INR", "HBA1C")
REASONS = ("Pneumonia", "Heart failure", "Hip fracture", "Appendicitis", "Asthma attack",
           "Cellulitis", "Chest pain", "Stroke", "Sepsis", "COPD exacerbation")
ACTIVE_STATES = ("created", "ready", "in_progress")


@dataclass(frozen=True)
class Ward:
    code: str
    department: str
    name: str
    beds: tuple[str, ...]


@dataclass
class OrderPlan:
    kind: str
    urgency: str
    fields: dict[str, Any]  # the PlaceOrder / API fields for this kind
    status: str  # where the order ends up: created … completed / cancelled
    assign_to_nurse: bool = False
    administrations: int = 0


@dataclass
class StayPlan:
    department: str
    ward: str
    bed: str
    reason: str
    days_ago: int  # admitted this many days before "now"
    length_of_stay: int  # days; current stays are still open
    current: bool
    orders: list[OrderPlan] = field(default_factory=list)


@dataclass
class PatientPlan:
    index: int
    given: str
    family: str
    birth_date: date
    sex: str
    allergies: list[tuple[str, str, str]]
    stays: list[StayPlan]  # oldest first; at most the last one is current

    @property
    def mrn(self) -> str:
        return f"B{self.index:08d}"

    def commands(self) -> int:
        """How many commands seeding this patient takes (the audit events it leaves)."""
        n = 1 + (len(self.allergies) or 1)  # no allergies: "no known allergies" recorded
        for stay in self.stays:
            n += 1 + (0 if stay.current else 1)
            for order in stay.orders:
                n += 1 + _STEPS[order.status] + int(order.assign_to_nurse) + order.administrations
        return n


_STEPS = {"created": 0, "ready": 1, "in_progress": 2, "completed": 3, "cancelled": 1}


def hospital() -> list[Ward]:
    wards = []
    for dept in DEPARTMENTS:
        for w in range(1, WARDS_PER_DEPARTMENT + 1):
            code = f"{dept}-B{w}"
            beds = tuple(f"{dept[0]}B{w}{b:02d}" for b in range(1, BEDS_PER_WARD + 1))
            wards.append(Ward(code, dept, f"{dept} bench ward {w}", beds))
    return wards


def family_name(rng: random.Random) -> str:
    # Two or three syllables: about 36k distinct names, skewed like real surnames.
    parts = [rng.choice(_SYLLABLES[: rng.choice((8, 16, len(_SYLLABLES)))])
             for _ in range(rng.choice((2, 2, 3)))]
    return "".join(parts).capitalize()


def identity(kind: str, n: int) -> dict[str, str]:
    """The name, birth date and sex of the ``n``-th patient a phase registers (``kind``: the
    driver's stays, the settling sentinels, the freshness probe), as the API takes them:
    varied as a hospital's new patients are. Identical names and one birth date for all
    would make every new patient a possible duplicate of every earlier one (a pair to note
    per earlier patient, for every registration), which no hospital's registrations do."""
    rng = random.Random(f"{kind}-{n}")
    born = date(1930, 1, 1).toordinal() + rng.randrange(75 * 365)
    return {"given_name": rng.choice(GIVEN), "family_name": family_name(rng),
            "birth_date": date.fromordinal(born).isoformat(),
            "sex": rng.choice(("female", "male"))}


def _order(rng: random.Random, current: bool) -> OrderPlan:
    kind = rng.choices(("medication", "lab", "imaging"), (5, 3, 2))[0]
    urgency = "stat" if rng.random() < 0.1 else "routine"
    if kind == "medication":
        code, unit, route, freq, dose = rng.choice(MEDICATIONS)
        fields = {"medication_code": code, "unit": unit, "route": route, "frequency": freq,
                  "dose": Decimal(dose)}
    elif kind == "imaging":
        modality, part = rng.choice(IMAGING)
        fields = {"modality": modality, "body_part": part}
    else:
        fields = {"test_code": rng.choice(LABS)}
    if current:
        status = rng.choices(ACTIVE_STATES + ("completed",), (4, 3, 2, 3))[0]
    else:
        status = rng.choices(("completed", "cancelled"), (8, 2))[0]
    administrations = 0
    if kind == "medication" and status in ("in_progress", "completed"):
        administrations = 1  # the first administration starts a prescription
    assign = current and status in ACTIVE_STATES and rng.random() < 0.25
    return OrderPlan(kind, urgency, fields, status, assign, administrations)


def _stay(rng: random.Random, ward: Ward, bed: str, current: bool) -> StayPlan:
    # Length of stay: most inpatients leave within a week, a few stay for weeks.
    los = min(60, max(1, int(rng.lognormvariate(1.3, 0.7))))
    days_ago = rng.randint(0, los) if current else rng.randint(los + 1, 3 * 365)
    orders = [_order(rng, current) for _ in range(rng.choice((1, 2, 3, 3, 4, 5)))]
    return StayPlan(ward.department, ward.code, bed, rng.choice(REASONS), days_ago, los,
                    current, orders)


def plan(n: int, seed: int = 20261122) -> list[PatientPlan]:
    """``n`` patients; current stays fill beds up to the occupancy cap, in bed order."""
    rng = random.Random(seed)
    wards = hospital()
    free = [(w, b) for w in wards for b in w.beds]
    rng.shuffle(free)
    capacity = int(len(free) * OCCUPANCY)
    current_left = min(capacity, int(n * CURRENT_STAY_SHARE))
    patients = []
    for i in range(n):
        age_years = rng.choice((rng.randint(0, 17), rng.randint(18, 64), rng.randint(65, 99)))
        born = date(2025 - age_years, rng.randint(1, 12), rng.randint(1, 28))  # all in the past
        allergies = []
        if rng.random() < ALLERGY_SHARE:
            allergies.append((rng.choice(SUBSTANCES), "rash", rng.choice(("mild", "moderate",
                                                                           "severe"))))
        stays = []
        if rng.random() < PAST_STAY_SHARE:
            ward = rng.choice(wards)
            stays.append(_stay(rng, ward, "", current=False))
        # Current stays are spread over the patient list so every size has the same mix.
        if current_left and rng.random() < current_left / (n - i):
            ward, bed = free.pop()
            stays.append(_stay(rng, ward, bed, current=True))
            current_left -= 1
        ordered: set[str] = set()  # medications this patient had, across stays
        for stay in stays:
            stay.orders = _orderable(stay.orders, allergies, ordered)
        patients.append(PatientPlan(i, rng.choice(GIVEN), family_name(rng), born,
                                    rng.choice(("female", "male")), allergies, stays))
    return patients


# What a prescriber gives a penicillin-allergic patient instead of amoxicillin.
PENICILLIN_ALTERNATIVE = ("CLARI", "mg", "PO", "Q12H", "500")


def _order_key(o: OrderPlan) -> tuple[Any, ...]:
    f = o.fields
    return (o.kind, f.get("medication_code"), f.get("test_code"), f.get("modality"),
            f.get("body_part"))


def _orderable(orders: list[OrderPlan], allergies: list[tuple[str, str, str]],
               ordered: set[str] | None = None) -> list[OrderPlan]:
    """The orders as a clinician would place them, so none fails an order check: no
    penicillin for a penicillin allergy, nothing ordered again while the same order is still
    active (orders are placed in turn, each taken to its final status before the next), and
    no medication a patient already had (``ordered``, across the patient's stays): the seed
    records every first dose at the time it runs, so a second course of the same drug would
    count against the first's maximum daily dose. Touches no random state, so the rest of the
    plan is the same for a seed."""
    penicillin = any(s == "Penicillin" for s, _, _ in allergies)
    ordered = set() if ordered is None else ordered
    kept: list[OrderPlan] = []
    for o in orders:
        if penicillin and o.fields.get("medication_code") == "AMOX":
            code, unit, route, freq, dose = PENICILLIN_ALTERNATIVE
            o.fields = {"medication_code": code, "unit": unit, "route": route,
                        "frequency": freq, "dose": Decimal(dose)}
        if any(_order_key(k) == _order_key(o) and k.status in ACTIVE_STATES for k in kept):
            continue
        drug = o.fields.get("medication_code")
        if drug is not None:
            if drug in ordered:
                continue
            ordered.add(drug)
        kept.append(o)
    return kept


def free_beds(patients: list[PatientPlan]) -> list[tuple[str, str, str]]:
    """(department, ward, bed) not taken by a seeded current stay: the driver admits there."""
    taken = {(s.ward, s.bed) for p in patients for s in p.stays if s.current}
    return [(w.department, w.code, b) for w in hospital() for b in w.beds
            if (w.code, b) not in taken]


def search_prefixes(patients: list[PatientPlan], count: int, seed: int = 7) -> list[str]:
    """Three-letter family-name prefixes that exist, as a clerk would type them."""
    rng = random.Random(seed)
    return [rng.choice(patients).family[:3] for _ in range(count)]


def summary(patients: list[PatientPlan]) -> dict[str, int]:
    stays = [s for p in patients for s in p.stays]
    orders = [o for s in stays for o in s.orders]
    return {
        "patients": len(patients),
        "current_stays": sum(s.current for s in stays),
        "past_stays": sum(not s.current for s in stays),
        "orders": len(orders),
        "active_orders": sum(o.status in ACTIVE_STATES for o in orders),
        "assigned_to_nurse": sum(o.assign_to_nurse for o in orders),
        "allergies": sum(len(p.allergies) for p in patients),
        "commands": sum(p.commands() for p in patients),
    }


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(summary(plan(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)), indent=2))
