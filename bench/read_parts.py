"""Where a worklist read's time goes: over HTTP, inside the server, in one process.

    python -m bench.read_parts [--patients 1000] [--reads 400]

Prepares a store (``bench.product_side``) in a temporary directory, then reads the admitted
page of one department (50 rows, and a 1-row page) ``--reads`` times each way:

- over HTTP: gunicorn as ``make run`` runs it (1 worker × 8 threads) serving
  ``bench.timed_wsgi``, one kept-alive connection (``bench.compare.HttpClient``);
- inside the server: the application's own time per call, from the same requests;
- in one process: ``hisadmin.wsgi.application`` called with a WSGI environ, in a loop;
- a bare answer of the page's size from the same server (``/__bare``).

Prints the p50 of each, in ms, as JSON (docs/performance.md quotes it).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.compare import BIN, PY, ROOT, HttpClient, free_port, stop_group, wait_ready

PAGES = {"50 rows": "department=MED&page_size=50", "1 row": "department=MED&page_size=1"}
PATH = "/api/v1/worklists/admitted"


def _p50(times: list[float]) -> float:
    return round(statistics.median(times), 3)


def over_http(port: int, token: str, reads: int) -> dict[str, Any]:
    client = HttpClient(f"http://127.0.0.1:{port}")
    out: dict[str, Any] = {}
    size = 0
    for name, query in PAGES.items():
        http_ms, app_ms = [], []
        for i in range(reads + 30):
            began = time.perf_counter()
            conn = client._connection()
            conn.request("GET", f"{PATH}?{query}", headers={"Authorization": f"Bearer {token}"})
            answer = conn.getresponse()
            body = answer.read()
            took = (time.perf_counter() - began) * 1000
            assert answer.status == 200, (answer.status, body[:200])
            if i >= 30:  # warm-up
                http_ms.append(took)
                app_ms.append(float(answer.getheader("X-App-Ms", "nan")))
        out[name] = {"over_http": _p50(http_ms), "in_server": _p50(app_ms),
                     "bytes": len(body)}
        size = max(size, len(body))
    bare = []
    for i in range(reads + 30):
        began = time.perf_counter()
        status, _ = client.call("GET", f"/__bare?bytes={size}")
        if i >= 30:
            bare.append((time.perf_counter() - began) * 1000)
    out["bare answer of the page's size"] = _p50(bare)
    return out


def in_process(token: str, reads: int) -> dict[str, float]:
    import django

    django.setup()
    from hisadmin.wsgi import application

    def call(query: str) -> None:
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": PATH, "QUERY_STRING": query,
                   "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "HTTP_HOST": "127.0.0.1",
                   "wsgi.input": io.BytesIO(b""), "wsgi.url_scheme": "http",
                   "wsgi.errors": sys.stderr, "SERVER_PROTOCOL": "HTTP/1.1",
                   "REMOTE_ADDR": "127.0.0.1", "HTTP_AUTHORIZATION": f"Bearer {token}"}
        parts = application(environ, lambda *a: None)
        b"".join(parts)
        parts.close()

    out = {}
    for name, query in PAGES.items():
        times = []
        for i in range(reads + 30):
            began = time.perf_counter()
            call(query)
            if i >= 30:
                times.append((time.perf_counter() - began) * 1000)
        out[name] = _p50(times)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patients", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=400)
    args = parser.parse_args(argv)
    var = Path(tempfile.mkdtemp(prefix="his-read-parts-"))
    env = dict(os.environ, PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="hisadmin.settings",
               HIS_VAR_DIR=str(var), EMBEDDED_STORE_PATH=str(var / "store.sqlite3"),
               DEMO_DATA="0", LOG_LEVEL="WARNING")
    subprocess.run([PY, "-m", "bench.product_side", "--var", str(var), "--patients",
                    str(args.patients), "--out", str(var / "prep.json")], env=env, cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    token = json.loads((var / "prep.json").read_text())["tokens"]["admin"]
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "gunicorn"), "bench.timed_wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", "8"], env=env, cwd=ROOT, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}", token)
        result: dict[str, Any] = {"patients": args.patients, "reads": args.reads,
                                  "http": over_http(port, token, args.reads)}
    finally:
        stop_group(server)
    os.environ.update({k: env[k] for k in ("HIS_VAR_DIR", "EMBEDDED_STORE_PATH", "DEMO_DATA",
                                           "LOG_LEVEL", "DJANGO_SETTINGS_MODULE")})
    result["in_process"] = in_process(token, args.reads)
    shutil.rmtree(var, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
