"""Demo accounts and a small demo hospital, created through the real use cases."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from django.contrib.auth.models import Group, User

from cosmos_backend.store import DocumentStore
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR, Actor
from hisadmin.core.inputs import hospital_time_zone
from hisadmin.core.policy import actor_for
from hisadmin.core.roles import ensure_groups
from hisadmin.core.store import new_uow
from patients import use_cases
from patients.domain.results import GivenValue
from patients.domain.shifts import Nurse, Shift
from patients.persistence import mrn, queries, setup_marks
from patients.use_cases.assignments import (
    AssignNurses,
    assign_nurses,
    read_assignments,
    shift_hours,
)
from patients.use_cases.beds import migrate_bed_holds
from patients.use_cases.observations import RecordObservations, record_observations
from patients.use_cases.results import CompleteOrder, complete_order

DEMO_USERS = (
    ("clinician", "clinician-demo-2026", "clinician", "Grace Hopper"),
    ("clerk", "clerk-demo-2026", "clerk", "Alan Clerk"),
    ("nurse", "nurse-demo-2026", "nurse", "Florence Night"),
    # the nurse in charge is a nurse too: she has beds of her own
    ("charge", "charge-nurse-demo-2026", "charge_nurse", "Mary Seacole"),
    ("admin", "admin-demo-2026", "admin", "Ada Admin"),
)
DEMO_PATIENTS = (
    ("María", "García López", date(1948, 3, 14), "female", ("CARD", "CARD-A", "A01", "Heart failure")),
    ("John", "Smith", date(1957, 11, 2), "male", ("CARD", "CARD-CCU", "C2", "NSTEMI")),
    ("Aiko", "Tanaka", date(1990, 6, 21), "female", ("MED", "MED-1", "M103", "Pneumonia")),
    ("Oluwaseun", "Adeyemi", date(1979, 1, 30), "male", ("MED", "MED-1", "M104", "Cellulitis")),
    ("Émile", "Durand", date(1935, 8, 8), "male", ("MED", "MED-2", "M202", "Fall, hip pain")),
    ("Fatima", "Khan", date(1986, 4, 17), "female", ("SURG", "SURG-1", "S101", "Appendicitis")),
    ("Lars", "Øvergaard", date(1969, 12, 24), "male", ("SURG", "SURG-1", "S105", "Cholecystitis")),
    ("Mia", "Müller", date(2016, 2, 9), "female", ("PAED", "PAED-1", "P03", "Asthma attack")),
    ("Chen", "Wei", date(1972, 9, 3), "male", None),
    ("Sofia", "Rossi", date(2001, 7, 12), "female", None),
    ("Noah", "Brown", date(1995, 5, 5), "male", None),
    ("Zoë", "Janssen", date(1963, 10, 19), "female", None),
)
_MED = {"kind": "medication", "unit": "mg", "route": "PO"}
DEMO_ORDERS = {  # by ward: a few active orders so the order worklists have content
    # dose times are the wards' standard local times (Europe/London under make run)
    "CARD-A": ({**_MED, "medication_code": "FURO", "dose": Decimal("40"), "frequency": "OD"},
               {"kind": "lab", "test_code": "BMP"}),
    "CARD-CCU": ({"kind": "lab", "test_code": "TROP", "urgency": "stat"},
                 {**_MED, "medication_code": "ENOX", "dose": Decimal("80"), "route": "SC",
                  "frequency": "Q12H"}),
    "MED-1": ({**_MED, "medication_code": "AMOX", "dose": Decimal("500"), "frequency": "TDS",
               "first_dose": "now"},
              {"kind": "imaging", "modality": "CR", "body_part": "CHEST"}),
    "SURG-1": ({"kind": "imaging", "modality": "CT", "body_part": "ABDOMEN",
                "urgency": "stat"},),
}

# By bed: a set of observations taken an hour before the load, so the chart, the score on the
# bed board and Patients at risk have something to show (one scores high: NEWS2 7).
DEMO_OBSERVATIONS = {
    "A01": {"respiration_rate": 18, "spo2": 95, "on_oxygen": False, "systolic_bp": 128,
            "diastolic_bp": 74, "pulse": 88, "consciousness": "A",
            "temperature": Decimal("37.1")},
    "M103": {"respiration_rate": 25, "spo2": 93, "on_oxygen": True, "oxygen_device": "nasal",
             "oxygen_flow_l_min": 2, "systolic_bp": 104, "diastolic_bp": 62, "pulse": 112,
             "consciousness": "A", "temperature": Decimal("38.6"), "pain_score": 3},
}
# A lab order's results: the first of the ward's lab orders, started and completed with
# these values (potassium high, so Results to review shows an abnormal result).
DEMO_RESULTS = {"CARD-A": (("NA", "137"), ("K", "5.9"), ("CREAT", "96"), ("UREA", "7.1"),
                           ("GLU", "6.2"))}
DEMO_SHIFT_BEDS = {"MED-1": ("M103", "M104")}  # the demo nurse's beds, every shift
# A second registration of DEMO-01 (another spelling, same birth date), for Possible
# duplicates: registered as the clerk who was sure it was not the same person.
DEMO_DUPLICATE = ("Maria", "Garcia-Lopez", date(1948, 3, 14), "female")


def ensure_users() -> Iterator[str]:
    ensure_groups()
    for username, password, role, full_name in DEMO_USERS:
        user, created = User.objects.get_or_create(username=username)
        first, _, last = full_name.partition(" ")
        user.first_name, user.last_name = first, last
        if created:
            user.set_password(password)
        if role == "admin":
            user.is_staff = user.is_superuser = True
        user.save()
        user.groups.add(Group.objects.get(name=role))
        if role == "charge_nurse":
            user.groups.add(Group.objects.get(name="nurse"))
        yield f"user {username} ({role}) {'created' if created else 'exists'}"


def demo_mrn(n: int) -> str:
    return f"DEMO-{n:02d}"


def load_patients(store: DocumentStore) -> Iterator[str]:
    """Register (and admit) the demo patients once; a re-run after a crash resumes.

    Demo patients carry fixed MRNs, so a patient registered before an interruption is found
    by a point read and skipped instead of registered twice.
    """
    if setup_marks.is_done(store, "demo"):
        yield "demo patients already loaded"
        return
    clerk = actor_for(User.objects.get(username="clerk"))
    clinician = User.objects.get(username="clinician")
    doctor = actor_for(clinician)
    for n, (given, family, born, sex, stay) in enumerate(DEMO_PATIENTS, start=1):
        if mrn.lookup(store, demo_mrn(n)) is not None:
            yield f"patient {demo_mrn(n)} exists"
            continue
        patient = use_cases.register_patient(use_cases.RegisterPatient(
            given_name=given, family_name=family, birth_date=born, sex=sex, mrn=demo_mrn(n)),
            new_uow(), actor=clerk)
        if stay is not None:
            department, ward, bed, reason = stay
            use_cases.admit_patient(use_cases.AdmitPatient(
                patient_id=patient.patient_id, department_id=department, ward_id=ward,
                bed=bed, reason=reason, attending_id=str(clinician.pk),
                attending_name=clinician.get_full_name()), new_uow(), actor=clerk)
            if DEMO_ORDERS.get(ward):  # asked on admission, before anything is prescribed
                use_cases.record_no_known_allergies(use_cases.RecordNoKnownAllergies(
                    patient.patient_id), new_uow(), actor=doctor)
            for order in DEMO_ORDERS.get(ward, ()):
                use_cases.place_order(use_cases.PlaceOrder(patient_id=patient.patient_id,
                                                         **order), new_uow(), actor=doctor)
            _results(store, patient.patient_id, ward, doctor)
            if bed in DEMO_OBSERVATIONS:
                record_observations(RecordObservations(
                    patient.patient_id, DEMO_OBSERVATIONS[bed],
                    taken_at=datetime.now(UTC) - timedelta(hours=1)), new_uow(), actor=doctor)
        yield f"patient {patient.mrn} registered" + (f" and admitted to {stay[1]}" if stay
                                                      else "")
    given, family, born, sex = DEMO_DUPLICATE
    number = len(DEMO_PATIENTS) + 1
    if mrn.lookup(store, demo_mrn(number)) is None:
        use_cases.register_patient(use_cases.RegisterPatient(
            given_name=given, family_name=family, birth_date=born, sex=sex,
            mrn=demo_mrn(number), confirm_not_duplicate=True), new_uow(), actor=clerk)
        yield f"patient {demo_mrn(number)} registered (a likely duplicate of {demo_mrn(1)})"
    setup_marks.mark_done(store, "demo")


def _results(store: DocumentStore, patient_id: str, ward: str, doctor: Actor) -> None:
    values = DEMO_RESULTS.get(ward)
    if not values:
        return
    lab = next(o for o in queries.orders(store, patient_id, active_only=True)
               if o["kind"] == "lab")
    use_cases.progress_order(use_cases.ProgressOrder(patient_id, lab["orderId"], "start"),
                             new_uow(), actor=doctor)
    complete_order(CompleteOrder(patient_id, lab["orderId"], tuple(
        GivenValue(code, Decimal(value)) for code, value in values)), new_uow(), actor=doctor)


def ensure_shift(store: DocumentStore) -> Iterator[str]:
    """The demo nurse has beds on the shift that is on now (the charge nurse assigned them),
    so My patients and the bed board's nurses show something at any hour; a shift already
    assigned is left as it is."""
    charge = actor_for(User.objects.get(username="charge"))
    nurse = User.objects.get(username="nurse")
    for ward, beds in DEMO_SHIFT_BEDS.items():
        shift = Shift.at(datetime.now(UTC), shift_hours(store, ward), hospital_time_zone())
        sheet = read_assignments(store, ward, shift)
        if sheet.version is not None:
            continue
        assign_nurses(AssignNurses(ward, shift, {bed: Nurse(str(nurse.pk), nurse.get_full_name())
                                                 for bed in beds}), new_uow(), actor=charge)
        yield f"{nurse.get_full_name()} assigned to {', '.join(beds)} on {ward}, {shift.name}"


def setup(store: DocumentStore, *, patients: bool = True) -> Iterator[str]:
    yield from ensure_users()
    loaded = use_cases.load_reference_data(UnitOfWork(store), actor=SYSTEM_ACTOR)
    outcomes = [outcome for _, _, outcome in loaded]
    yield f"reference data: {outcomes.count('created')} created, {outcomes.count('updated')} updated"
    yield from migrate_bed_holds(UnitOfWork(store), actor=SYSTEM_ACTOR)  # stores made before
    if patients:
        yield from load_patients(store)
        yield from ensure_shift(store)
