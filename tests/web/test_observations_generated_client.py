"""The observations API through a client generated from its OpenAPI document, as an
integrator would build one: openapi-python-client (docs/dependencies.md says why) turns
``/api/v1/openapi.json``, fetched from a running server, into a typed package (attrs models,
httpx calls), which then records, replays, pages, reads and escalates sets over real HTTP.
Every answer is parsed by the generated models, so a body or a status the document does not
describe fails here."""

from __future__ import annotations

import importlib
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from accounts.models import ApiToken
from testkit.fixtures import SeededPatient

pytestmark = [pytest.mark.django_db(transaction=True)]
GENERATOR = Path(sys.executable).with_name("openapi-python-client")
LOCAL = timezone(timedelta(hours=1))


@pytest.fixture
def generated(live_server: Any, tmp_path: Path, his_user: Callable[..., Any]
              ) -> Iterator[Callable[[str], ModuleType]]:
    """The client package generated from the live server's document (read, as an
    integrator does, with their token); ``generated(name)`` imports one of its modules
    (``client``, ``models``, ``api.observations.…``)."""
    token = _token(his_user("gen-reader", "nurse"))
    document = httpx.get(f"{live_server.url}/api/v1/openapi.json", timeout=30,
                         headers={"Authorization": f"Bearer {token}"})
    assert document.status_code == 200
    (tmp_path / "openapi.json").write_bytes(document.content)
    (tmp_path / "config.yaml").write_text("post_hooks: []\n")  # no formatter needed to run it
    package = f"his_client_{uuid.uuid4().hex[:8]}"
    done = subprocess.run(
        [str(GENERATOR), "generate", "--path", "openapi.json", "--output-path", package,
         "--meta", "none", "--config", "config.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr  # every operation and schema generated
    sys.path.insert(0, str(tmp_path))
    yield lambda name: importlib.import_module(f"{package}.{name}" if name else package)
    sys.path.remove(str(tmp_path))


def _token(user: Any) -> str:
    _, raw = ApiToken.issue(user, "generated client")
    return raw


@pytest.fixture
def clients(generated, live_server, his_user) -> dict[str, Any]:
    client = generated("client")
    return {role: client.AuthenticatedClient(base_url=live_server.url,
                                             token=_token(his_user(f"gen-{role}", role)),
                                             raise_on_unexpected_status=True)
            for role in ("nurse", "clinician")}


def test_a_nurse_records_and_reads_sets_through_the_generated_client(
        generated, clients, his_patient: Callable[..., SeededPatient]) -> None:
    models = generated("models")
    post = generated("api.observations.patients_api_observations_post_observations")
    listed = generated("api.observations.patients_api_observations_list_observations")
    one = generated("api.observations.patients_api_observations_get_observation")
    escalate = generated("api.observations.patients_api_observations_post_escalation")
    patient = his_patient("Générée", given="Zoë")
    nurse = clients["nurse"]
    taken = (datetime.now(UTC) - timedelta(minutes=20)).astimezone(LOCAL)
    body = models.ObservationIn(
        respiration_rate=22, spo2=94, on_oxygen=False, systolic_bp=104, diastolic_bp=62,
        pulse=112, consciousness=models.ObservationInConsciousnessType0.A,
        temperature="38,4", comment="Rigors — GP informed 🙂", taken_at=taken)

    made = post.sync_detailed(patient.id, client=nurse, body=body, idempotency_key="gen-1")
    assert made.status_code == 201
    saved = made.parsed
    assert isinstance(saved, models.ObservationOut)
    assert made.headers["Location"].endswith(f"/observations/{saved.observation_id}")
    assert (saved.news2.score, saved.news2.risk.value, saved.news2.complete) == (7, "high", True)
    assert saved.temperature == 38.4  # typed with a decimal comma
    assert datetime.fromisoformat(saved.taken_at) == taken  # its offset and microseconds
    again = post.sync_detailed(patient.id, client=nurse, body=body, idempotency_key="gen-1")
    assert again.parsed.observation_id == saved.observation_id  # replayed, not recorded twice
    assert again.headers.get("Idempotent-Replayed") == "true"

    later = models.ObservationIn(pulse=95, taken_at=datetime.now(UTC) - timedelta(minutes=1))
    partial = post.sync(patient.id, client=nurse, body=later)
    assert partial.news2.complete is False and partial.news2.score is None

    first = listed.sync(patient.id, client=nurse, limit=1)
    assert isinstance(first, models.ObservationPage)
    assert [s.observation_id for s in first.items] == [partial.observation_id]  # newest first
    second = listed.sync(patient.id, client=nurse, limit=1, continuation=first.continuation)
    assert [s.observation_id for s in second.items] == [saved.observation_id]

    read = one.sync_detailed(patient.id, saved.observation_id, client=nurse)
    assert read.status_code == 200 and read.headers["ETag"]
    assert read.parsed.to_dict() == saved.to_dict()

    told = escalate.sync(patient.id, saved.observation_id, client=nurse,
                         body=models.EscalationIn(told_whom="Dr Åsa Öberg, registrar",
                                                  response=models.EscalationInResponse.REVIEWED))
    assert isinstance(told, models.ObservationOut) and told.escalations


def test_refusals_come_back_as_the_documented_problems(
        generated, clients, his_patient: Callable[..., SeededPatient]) -> None:
    models = generated("models")
    post = generated("api.observations.patients_api_observations_post_observations")
    scale = generated("api.observations.patients_api_observations_post_scale")
    patient = his_patient("Refusée")

    impossible = post.sync_detailed(patient.id, client=clients["nurse"],
                                    body=models.ObservationIn(spo2=104))
    assert impossible.status_code == 422 and isinstance(impossible.parsed, models.Problem)
    assert [e.field for e in impossible.parsed.errors] == ["spo2"]

    future = post.sync_detailed(patient.id, client=clients["nurse"], body=models.ObservationIn(
        pulse=80, taken_at=datetime.now(UTC) + timedelta(hours=1)))
    assert future.status_code == 422
    assert [e.field for e in future.parsed.errors] == ["taken_at"]

    not_hers = scale.sync_detailed(patient.id, client=clients["nurse"],
                                   body=models.ScaleIn(scale=models.ScaleInScale.VALUE_2, reason="Hypercapnic COPD"))
    assert not_hers.status_code == 403 and isinstance(not_hers.parsed, models.Problem)
    decided = scale.sync(patient.id, client=clients["clinician"],
                         body=models.ScaleIn(scale=models.ScaleInScale.VALUE_2, reason="Hypercapnic COPD"))
    assert isinstance(decided, models.ScaleOut)
    twice = scale.sync_detailed(patient.id, client=clients["clinician"],
                                body=models.ScaleIn(scale=models.ScaleInScale.VALUE_2, reason="Hypercapnic COPD"))
    assert twice.status_code == 409 and isinstance(twice.parsed, models.ConflictProblem)
