"""The launcher's choices of process priority (light mode: the worker below the web)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hisadmin import launcher


def test_light_mode_runs_the_worker_at_the_webs_priority_unless_told() -> None:
    assert launcher.niceness("light", {}) == {"worker": 0}
    assert launcher.niceness("light", {"HIS_WORKER_NICE": "10"}) == {"worker": 10}
    assert launcher.niceness("light", {"HIS_WORKER_NICE": "0"}) == {"worker": 0}
    assert launcher.niceness("light", {"HIS_WORKER_NICE": "19"}) == {"worker": 19}
    assert launcher.niceness("separate", {"HIS_WORKER_NICE": "5"}) == {}


@pytest.mark.parametrize("raw", ["-1", "20", "ten", "1.5"])
def test_a_bad_niceness_is_refused_with_what_to_set(raw: str) -> None:
    with pytest.raises(ValueError, match="HIS_WORKER_NICE must be a whole number from 0 to 19"):
        launcher.niceness("light", {"HIS_WORKER_NICE": raw})


def test_every_thread_of_a_child_started_nicer_inherits_it(tmp_path: Path) -> None:
    """Linux keeps niceness per thread: it is set before exec, so the threads the child
    starts later (the worker's pool, its relay) run at it too."""
    out = tmp_path / "nice.txt"
    probe = ("import os, sys, threading\n"
             "seen = []\n"
             "t = threading.Thread(target=lambda: seen.append(os.nice(0)))\n"
             "t.start(); t.join()\n"
             "open(sys.argv[1], 'w').write(f'{os.nice(0)} {seen[0]}')\n")
    children = launcher.Children()
    children.start("probe", [sys.executable, "-c", probe, str(out)], dict(os.environ), nice=3)
    assert children.procs["probe"].wait(30) == 0
    start = os.nice(0)
    assert out.read_text().split() == [str(start + 3), str(start + 3)]


@pytest.mark.parametrize("mode", ["light", "separate"])
def test_gunicorn_reads_request_lines_past_djangos_own_limit(mode: str) -> None:
    """Gunicorn's default (4,094 bytes) would answer its own HTML 414 before Django could
    answer in the caller's language; it reads up to its most, 8,190, above Django's 4,096."""
    from hisadmin.errors import MAX_REQUEST_URI  # noqa: PLC0415 - Django settings needed

    web = launcher.commands(mode, "8123", {})["web"]
    limit = int(web[web.index("--limit-request-line") + 1])
    assert limit == 8190 and limit > MAX_REQUEST_URI + len("GET  HTTP/1.1")
