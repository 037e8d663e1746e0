"""The launcher's gunicorn, for real: a request line between Django's limit (4,096 bytes of
path and query) and gunicorn's (8,190) reaches Django and is answered 414 in the caller's
language; past gunicorn's own limit, gunicorn answers (its plain 414, as documented)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from hisadmin import launcher
from tests.integration.processes import free_port, stack_env, start, stop, wait_for

pytestmark = pytest.mark.integration
http = requests.Session()
http.trust_env = False  # straight to the local server, whatever proxy the machine names


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base: Path = tmp_path_factory.mktemp("web")
    port = str(free_port())
    env = stack_env(base / "store.sqlite3", base / "var", "redis://127.0.0.1:1/0")
    proc = start(launcher.commands("light", port, env)["web"], env, base / "web.log")
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return http.get(f"{url}/api/v1/nowhere", timeout=5).status_code > 0
        except requests.RequestException:
            return False

    try:
        wait_for(up, timeout=60)
        yield url
    finally:
        stop(proc)


def test_it_answers_a_5_kb_api_line_with_a_problem_through_gunicorn(web: str) -> None:
    response = http.get(f"{web}/api/v1/worklists/admitted?q={'Ø' * 800}",
                         headers={"Authorization": "Bearer his_nothing"})
    assert response.status_code == 414
    assert response.headers["content-type"] == "application/problem+json"
    assert json.loads(response.text)["type"] == "/api/v1/problems/uri-too-long"


def test_it_answers_a_6_kb_fhir_line_with_an_operation_outcome_through_gunicorn(
        web: str) -> None:
    response = http.get(f"{web}/fhir/R4/Patient?name={'x' * 6000}")
    assert response.status_code == 414
    assert response.headers["content-type"] == "application/fhir+json"
    assert json.loads(response.text)["issue"][0]["code"] == "too-long"


def test_past_gunicorns_own_limit_gunicorn_answers(web: str) -> None:
    response = http.get(f"{web}/api/v1/worklists/admitted?q={'x' * 9000}")
    assert response.status_code == 414
    assert "application/problem+json" not in response.headers.get("content-type", "")
