"""The Celery worker does not load what only the web serves.

The worker imports every app (Django's registry, the admin's autodiscovery) and its tasks,
but never answers HTTP: django-ninja (the API), qrcode (two-factor enrolment) and
python-barcode (wristbands, labels) are imported where they are used, so the worker's
memory stays without them (docs/performance.md, "The worker's memory").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from worklists.delivery.tasks import PAGE_TASK, TASK

ROOT = Path(__file__).resolve().parents[2]
WEB_ONLY = ("ninja", "qrcode", "barcode", "PIL")

PROBE = """
import json, sys
import django
django.setup()
from hisadmin.celery import app
app.loader.import_default_modules()
tasks = sorted(name for name in app.tasks if not name.startswith("celery."))
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:]))
print(json.dumps({"tasks": tasks, "loaded": loaded}))
"""


def _probe(tmp_path: Path, **env: str) -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *WEB_ONLY], cwd=ROOT, capture_output=True, text=True,
        timeout=120, check=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "hisadmin.settings",
             "HIS_VAR_DIR": str(tmp_path), **env})
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_worker_loads_its_tasks_without_the_web_only_libraries(tmp_path: Path) -> None:
    # As the launcher starts it: system checks already run by `migrate`.
    found = _probe(tmp_path, CELERY_SKIP_CHECKS="1")
    assert {PAGE_TASK, TASK} <= set(found["tasks"]), found["tasks"]
    assert found["loaded"] == [], f"the worker imported {found['loaded']}"


def test_the_web_only_libraries_load_where_they_are_used() -> None:
    from patients.pages.barcodes import code128_svg

    svg = code128_svg("MRN00012345")
    assert svg.startswith("<svg") and 'data-code="MRN00012345"' in svg
    assert "barcode" in sys.modules
