"""`make run`: prepare everything, then run web + Celery worker + change-feed relay.

Ctrl-C (SIGINT) or SIGTERM stops every process this started; the embedded Redis stops last.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from honcho.manager import Manager

from hisadmin.embedded_redis import EmbeddedRedis

ROOT = Path(__file__).resolve().parent.parent


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, check=True,
                   cwd=ROOT)


def main() -> int:
    port = os.environ.get("PORT", "8000")
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")
    var_dir = Path(env.get("HIS_VAR_DIR", ROOT / "var"))
    redis = None
    if not env.get("REDIS_URL"):
        redis = EmbeddedRedis(var_dir / "redis")
        env["REDIS_URL"] = redis.celery_url
        print(f"embedded redis on {redis.socket}", flush=True)

    _manage(env, "migrate", "--noinput", "-v", "0")
    _manage(env, "cosmos_init")
    _manage(env, "setup_demo")

    bin_dir = Path(sys.executable).parent
    manager = Manager()
    manager.add_process(
        "web",
        f"{bin_dir / 'gunicorn'} hisadmin.wsgi --bind 127.0.0.1:{port} --workers 2 --threads 4 "
        "--access-logfile - --graceful-timeout 5",
        env=env, cwd=str(ROOT),
    )
    manager.add_process(
        "worker",
        f"{bin_dir / 'celery'} -A hisadmin worker --loglevel WARNING --concurrency 2 "
        "--without-gossip --without-mingle -Q projections,celery",
        env=env, cwd=str(ROOT),
    )
    # Webhook deliveries on their own worker: a slow receiver never holds up the worklists.
    manager.add_process(
        "webhooks",
        f"{bin_dir / 'celery'} -A hisadmin worker --loglevel WARNING --concurrency 2 "
        "--without-gossip --without-mingle -Q webhooks -n webhooks@%h",
        env=env, cwd=str(ROOT),
    )
    manager.add_process("relay", f"{sys.executable} manage.py run_relay", env=env, cwd=str(ROOT))
    print(f"\n  Hospital back office: http://127.0.0.1:{port}/\n"
          "  Demo clinician: clinician / clinician-demo-2026\n"
          "  Demo admin:     admin / admin-demo-2026\n"
          "  (clerk / clerk-demo-2026, nurse / nurse-demo-2026)\n  Ctrl-C stops everything.\n",
          flush=True)
    try:
        manager.loop()
    finally:
        if redis is not None:
            redis.shutdown()
    return manager.returncode or 0


if __name__ == "__main__":
    sys.exit(main())
