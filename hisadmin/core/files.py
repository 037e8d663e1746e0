"""The data directory (``VAR_DIR``) is the owner's alone: 0700, every file in it 0600.

It holds the clinical store, Django's database (password hashes, live sessions, TOTP
secrets), Redis's queue files and logs. Every process entry point (``manage.py``, the web
server's ``hisadmin.wsgi``, a Celery worker, the launcher) sets the umask to 077 before it
creates anything, so new files are born private whatever the shell's umask; and it takes
group and other bits off what an earlier run (or an older version) left readable.
``manage.py check_security`` reports anything still open (:func:`open_to_others`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600
OTHERS = stat.S_IRWXG | stat.S_IRWXO  # the bits that must be clear


def private_umask() -> None:
    """From now on this process (and its children) create files 0600 and directories 0700."""
    os.umask(PRIVATE_UMASK)


def private_dir(path: Path) -> Path:
    """``path`` created if missing, 0700 either way."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    path.chmod(DIR_MODE)
    return path


def tighten(root: Path) -> int:
    """Take group and other bits off ``root`` and everything under it (symbolic links are
    neither followed nor changed); returns how many entries changed. A file that vanishes
    meanwhile (a SQLite journal, a Redis rewrite) is skipped."""
    changed = 0
    if not root.is_dir():
        return 0
    for entry in [root, *root.rglob("*")]:
        try:
            st = entry.lstat()
            if stat.S_ISLNK(st.st_mode) or not st.st_mode & OTHERS:
                continue
            entry.chmod(stat.S_IMODE(st.st_mode) & ~OTHERS)
            changed += 1
        except FileNotFoundError:
            continue
    return changed


def open_to_others(root: Path) -> list[tuple[Path, int]]:
    """(path, mode) of ``root`` and every entry under it that its group or others may use."""
    found: list[tuple[Path, int]] = []
    if not root.exists():
        return found
    for entry in [root, *root.rglob("*")]:
        try:
            st = entry.lstat()
        except FileNotFoundError:
            continue
        if not stat.S_ISLNK(st.st_mode) and st.st_mode & OTHERS:
            found.append((entry, stat.S_IMODE(st.st_mode)))
    return found


def secure_data_dir(root: Path) -> None:
    """What an entry point does first: private umask, ``root`` 0700, nothing in it open."""
    private_umask()
    private_dir(root)
    tighten(root)
