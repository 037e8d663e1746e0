"""Keeps the access-audit benchmark working (a few reads; numbers are not asserted, but the
benchmark itself checks that every read was recorded exactly once)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench
ROOT = Path(__file__).resolve().parents[2]


def test_it_runs_the_access_audit_benchmark_with_a_few_reads(tmp_path: Path) -> None:
    out = tmp_path / "access.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.access_audit_bench", "--reads", "5", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert {(r["mode"], r["read"]) for r in report["results"]} == {
        (mode, read)
        for mode in ("off", "inline", "background")
        for read in ("chart page", "API record", "API medication record", "FHIR Patient")
    }
    assert all(0 < r["p50_ms"] <= r["p95_ms"] for r in report["results"])
