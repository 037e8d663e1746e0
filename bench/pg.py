"""A private PostgreSQL cluster for the baseline (Debian's ``postgresql`` package).

PostgreSQL refuses to run as root, so when the benchmark runs as root the cluster is created
and started as the ``postgres`` system user (``runuser``). Nothing outside the given directory
is touched; ``stop()`` shuts the cluster down. ``available()`` says why not, when it is not.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path


def bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def try_install() -> None:
    """``apt-get install postgresql`` when running as root and it is missing (best effort)."""
    if bin_dir() is not None or os.geteuid() != 0 or not shutil.which("apt-get"):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql"], env=env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def available() -> str | None:
    """None when a cluster can be started here, else the reason it cannot."""
    try:
        # Bench-only (requirements-bench.txt); importing also proves its libpq wrapper loads.
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed"
    if bin_dir() is None:
        return "PostgreSQL is not installed (apt package postgresql)"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root without runuser"
    return None


class Cluster:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.data = directory / "data"
        self.port = _free_port()
        self.bin = bin_dir()
        assert self.bin is not None

    def _run(self, *args: str) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def start(self) -> str:
        self.dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            # The postgres user must be able to reach and own its directory.
            for parent in [self.dir, *self.dir.parents]:
                if parent == Path("/"):
                    break
                os.chmod(parent, os.stat(parent).st_mode | 0o055)
            shutil.chown(self.dir, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "--auth=trust", "--locale=C", "-E", "UTF8",
                  "-U", "postgres")
        # synchronous_commit=off matches the product's embedded store (SQLite WAL with
        # synchronous=NORMAL): commits are not fsynced one by one, on either side.
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                "-c synchronous_commit=off -c shared_buffers=256MB -c max_connections=50")
        self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.dir / "log"),
                  "-w", "start")
        import psycopg  # bench-only (requirements-bench.txt): make test runs without it

        for _ in range(50):
            try:
                with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
                    conn.execute("CREATE DATABASE bench")
                break
            except psycopg.OperationalError:
                time.sleep(0.2)
        return self.url("bench")

    def url(self, db: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{db}"

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        except subprocess.CalledProcessError:
            pass
