"""manage.py makes var/ private whatever the umask, and check_security reports file modes,
the secret key, password and token settings and check --deploy: fatal in production."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.service
ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k" * 20 + "Zq8#v!Lm2@xR5$wT9^yU1&iO4*pA7(sD0)fG3-hJ6+kL"


def manage(var: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("HISADMIN_ENV", "SECRET_KEY", "DEBUG", "ADMIN_TWO_FACTOR",
                          "DATABASE_URL", "EMBEDDED_STORE_PATH",
                          # set by the browser tests of the same run (playwright's loop and
                          # the ORM); a deployment never has it, and check --deploy says so
                          "DJANGO_ALLOW_ASYNC_UNSAFE")}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True,
        env={**clean, "HIS_VAR_DIR": str(var), **env}, timeout=180,
        preexec_fn=lambda: os.umask(0o022),  # a usual shell's: files 0644 unless told
    )


def modes(var: Path) -> dict[str, int]:
    return {str(p.relative_to(var)): stat.S_IMODE(p.stat().st_mode)
            for p in [var, *var.rglob("*")]}


def test_commands_make_var_private_and_check_security_holds_it(tmp_path: Path) -> None:
    var = tmp_path / "var"
    var.mkdir(mode=0o755)
    var.chmod(0o755)
    (var / "left-by-an-old-version.log").write_text("x")
    (var / "left-by-an-old-version.log").chmod(0o644)

    done = manage(var, "migrate", "--noinput", "-v", "0")
    assert done.returncode == 0, done.stderr
    done = manage(var, "cosmos_init")
    assert done.returncode == 0, done.stderr
    found = modes(var)
    assert found.pop(".") == 0o700
    assert "django.sqlite3" in found and "store.sqlite3" in found
    assert all(m == 0o600 for m in found.values()), {k: oct(m) for k, m in found.items()}

    done = manage(var, "check_security", HISADMIN_ENV="production", SECRET_KEY=STRONG_KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "files: ok" in done.stdout and "no findings" in done.stdout

    (var / "django.sqlite3").chmod(0o644)
    done = manage(var, "check_security", HISADMIN_ENV="production", SECRET_KEY=STRONG_KEY)
    assert done.returncode != 0 and "1 security finding(s)" in done.stderr
    assert f"{var / 'django.sqlite3'} is 644" in done.stdout


def test_development_reports_without_failing_and_strict_fails(tmp_path: Path) -> None:
    var = tmp_path / "var"
    done = manage(var, "check_security", SECRET_KEY="short-key")
    assert done.returncode == 0, done.stderr
    assert "SECRET_KEY has 9 characters" in done.stdout
    assert "security.W008" in done.stdout  # check --deploy's findings, as Django words them
    assert "passwords: ok" in done.stdout
    assert manage(var, "check_security", "--strict").returncode != 0
