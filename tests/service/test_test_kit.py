"""The test kit works for a downstream suite: the example under examples/downstream runs with
only the plugin (no conftest of this repository), in its own pytest process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.service


def test_the_downstream_example_passes_with_only_the_plugin(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--noconftest", "-p", "no:cacheprovider",
         "-c", "/dev/null", "--rootdir", str(ROOT), "--ds", "hisadmin.settings",
         "-p", "cosmos_backend.pytest_plugin", "-p", "testkit.plugin", "-q",
         str(ROOT / "examples" / "downstream")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
             "HIS_VAR_DIR": str(tmp_path / "var")})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout
