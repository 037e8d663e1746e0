"""Keeps the read-breakdown harness working (tiny size; numbers are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench
ROOT = Path(__file__).resolve().parents[2]


def test_it_times_a_worklist_read_over_http_in_the_server_and_in_process() -> None:
    done = subprocess.run([sys.executable, "-m", "bench.read_parts", "--patients", "50",
                           "--reads", "20"], cwd=ROOT, capture_output=True, text=True,
                          timeout=240, check=True)
    report = json.loads(done.stdout[done.stdout.index("{"):])
    for page in ("50 rows", "1 row"):
        http = report["http"][page]
        assert 0 < http["in_server"] < http["over_http"] and http["bytes"] > 0
        assert report["in_process"][page] > 0
    assert report["http"]["bare answer of the page's size"] > 0
