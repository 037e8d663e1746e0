"""``load_reference_data PATH... [--dry-run]``: a hospital's own files, checked as a whole,
the difference shown, applied with events and the actor; retired, never deleted; a bad file
changes nothing and says which file, line and field."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from cosmos_backend.store import Query
from cosmos_backend.uow import UnitOfWork
from hisadmin.core.actor import SYSTEM_ACTOR
from patients import use_cases
from patients.persistence import reference

pytestmark = [pytest.mark.service, pytest.mark.django_db]


@pytest.fixture
def shipped(his_store) -> None:
    list(use_cases.load_reference_data(UnitOfWork(his_store), actor=SYSTEM_ACTOR))


def run(*args: str) -> str:
    out = StringIO()
    call_command("load_reference_data", *args, stdout=out)
    return out.getvalue()


def wards_file(tmp_path: Path, wards: list[dict], name: str = "Ward.json") -> Path:
    path = tmp_path / name
    path.write_text("[\n" + ",\n".join(json.dumps(w) for w in wards) + "\n]\n")
    return path


def current_wards(store) -> list[dict]:
    return [dict(w) for w in reference.all_of(store, "Ward").values()]


def test_a_dry_run_shows_the_difference_and_changes_nothing(his_store, shipped,
                                                             tmp_path) -> None:
    wards = current_wards(his_store)
    before = {w["code"]: w for w in wards}
    kept = [{k: v for k, v in w.items() if k != "active"} for w in wards
            if w["code"] != "CARD-CCU"]
    kept[0] = {**kept[0], "name": kept[0]["name"] + " (renamed)"}
    kept.append({"code": "MED-3", "name": "Medical Ward 3", "departmentId": "MED",
                 "beds": ["X1", "X2"]})
    out = run(str(wards_file(tmp_path, kept)), "--dry-run")
    assert "+ Ward MED-3: Medical Ward 3" in out
    assert f"~ Ward {kept[0]['code']}: name" in out
    assert "- Ward CARD-CCU: retired" in out
    assert "1 added, 1 changed, 1 retired" in out and "dry run: nothing changed." in out
    assert {w["code"]: w for w in current_wards(his_store)} == before


def test_it_applies_with_events_retires_and_is_idempotent(his_store, shipped, tmp_path,
                                                          django_user_model) -> None:
    django_user_model.objects.create_user("refadmin", first_name="Rita", last_name="Ref")
    wards = [{k: v for k, v in w.items() if k != "active"} for w in current_wards(his_store)
             if w["code"] != "CARD-CCU"]
    wards.append({"code": "MED-3", "name": "Medical Ward 3", "departmentId": "MED",
                  "beds": ["X1"]})
    path = wards_file(tmp_path, wards)
    out = run(str(path), "--actor", "refadmin")
    assert "1 created" in out and "1 retired" in out
    stored = reference.all_of(his_store, "Ward")
    assert stored["MED-3"]["beds"] == ["X1"] and stored["MED-3"]["active"] is True
    assert stored["CARD-CCU"]["active"] is False  # retired, kept
    events = [d for d in his_store.query_all("R_Ward", Query()) if d["docType"] == "Event"]
    assert any(e["docContents"]["actor"]["username"] == "refadmin" for e in events)
    again = run(str(path))
    assert "0 added, 0 changed, 0 retired" in again and "nothing to change." in again


@pytest.mark.parametrize(("entry", "said"), [
    ({"code": "BAD-1", "name": "Bad", "departmentId": "NOPE", "beds": []},
     "line 3: Ward 'BAD-1', field 'departmentId': 'NOPE' is not a Department code."),
    ({"code": "BAD-2", "name": "Bad", "departmentId": "MED", "beds": ["B1", "B1"]},
     "line 3: Ward 'BAD-2', field 'beds': bed B1 is listed twice."),
    ({"code": "BAD-3", "departmentId": "MED"},
     "line 3: Ward 'BAD-3', field 'name': give a name."),
])
def test_a_bad_entry_changes_nothing_and_names_file_line_and_field(
        his_store, shipped, tmp_path, entry: dict, said: str) -> None:
    before = current_wards(his_store)
    good = {"code": "OK-1", "name": "Fine", "departmentId": "MED", "beds": ["F1"]}
    path = wards_file(tmp_path, [good, entry])
    with pytest.raises(CommandError) as caught:
        run(str(path))
    assert f"Ward.json {said}" in str(caught.value)
    assert current_wards(his_store) == before  # not even the good entry


def test_medication_references_and_analyte_units_are_checked(his_store, shipped,
                                                             tmp_path) -> None:
    meds = [{**m} for m in reference.all_of(his_store, "Medication").values()]
    meds[0] = {**meds[0], "classes": ["NO-SUCH-CLASS"]}
    (tmp_path / "meds.json").write_text(json.dumps({"type": "Medication", "entries": meds},
                                                   indent=1))
    with pytest.raises(CommandError, match="'NO-SUCH-CLASS' is not an Allergen code"):
        run(str(tmp_path / "meds.json"))
    tests = [{**t} for t in reference.all_of(his_store, "LabTest").values()]
    tests[0] = {**tests[0], "analytes": [{**tests[0]["analytes"][0], "unit": "furlongs"}]}
    wards_file(tmp_path, tests, "LabTest.json")
    with pytest.raises(CommandError, match="LabTest.json line 2: .*'furlongs' is not a Unit"):
        run(str(tmp_path / "LabTest.json"))


@pytest.mark.parametrize(("name", "text", "said"), [
    ("Ward.json", '[\n{"code": "A",\n "name": }\n]', "Ward.json line 3: Expecting value"),
    ("Wards.json", "[]", "the file name says no type"),
    ("x.json", '{"type": "Ward"}', 'x.json line 1: give {"type"'),
    ("Ward.json", '[\n 1\n]', "Ward.json line 2: each entry is an object."),
])
def test_an_unreadable_file_is_refused_with_where(his_store, shipped, tmp_path, name: str,
                                                  text: str, said: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(CommandError) as caught:
        run(str(tmp_path / name))
    assert said in str(caught.value)


def test_no_file_and_an_unknown_actor_are_errors(shipped, tmp_path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        run(str(tmp_path / "missing.json"))
    with pytest.raises(CommandError, match="needs the files"):
        run("--dry-run")
    with pytest.raises(CommandError, match="no active user"):
        run(str(wards_file(tmp_path, [])), "--actor", "nobody")


def test_a_directory_loads_its_files_in_reference_order(his_store, shipped, tmp_path) -> None:
    (tmp_path / "Department.json").write_text(json.dumps(
        [{**{k: v for k, v in d.items() if k != "active"}}
         for d in reference.all_of(his_store, "Department").values()]
        + [{"code": "ONC", "name": "Oncology"}]))
    wards = [{k: v for k, v in w.items() if k != "active"} for w in current_wards(his_store)]
    wards_file(tmp_path, [*wards, {"code": "ONC-1", "name": "Oncology Ward", "departmentId":
                                   "ONC", "beds": ["O1"]}])
    out = run(str(tmp_path))
    assert "2 created" in out
    assert reference.all_of(his_store, "Ward")["ONC-1"]["departmentId"] == "ONC"
