"""The bench's planned hospital can be seeded through the product's use cases: a patient
never has the same medication twice (the seed records every first dose when it runs, so a
second course would count against the first's maximum daily dose)."""

from __future__ import annotations

from bench import workload


def test_no_patient_is_planned_the_same_medication_twice() -> None:
    patients = workload.plan(20_000)
    courses = 0
    for p in patients:
        drugs = [o.fields["medication_code"] for s in p.stays for o in s.orders
                 if o.kind == "medication"]
        assert len(drugs) == len(set(drugs)), (p.mrn, drugs)
        courses += len(drugs)
    assert courses > 5_000  # the plan still prescribes plenty


def test_a_penicillin_allergy_is_prescribed_the_alternative() -> None:
    allergic = [p for p in workload.plan(5_000)
                if any(s == "Penicillin" for s, _, _ in p.allergies)]
    drugs = {o.fields.get("medication_code") for p in allergic for s in p.stays
             for o in s.orders}
    assert "AMOX" not in drugs and workload.PENICILLIN_ALTERNATIVE[0] in drugs
