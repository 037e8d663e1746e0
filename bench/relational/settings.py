"""The relational baseline: the same domain as plain Django ORM models, served the same way.

``RELATIONAL_DATABASE_URL`` picks the engine (SQLite file by default, PostgreSQL when given).
The middleware stack is the product's minus the pieces its pages need (static files, htmx),
so both APIs pay the same per-request framework cost.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

VAR_DIR = Path(os.environ.get("RELATIONAL_VAR_DIR", "var/relational"))
VAR_DIR.mkdir(parents=True, exist_ok=True)
SECRET_KEY = "relational-benchmark-only"
DEBUG = False
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "testserver"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "bench.relational.apps.RelationalConfig",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "bench.relational.urls"
WSGI_APPLICATION = "bench.relational.wsgi.application"
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("RELATIONAL_DATABASE_URL", f"sqlite:///{VAR_DIR / 'relational.sqlite3'}"),
        conn_max_age=60)
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL, a busy timeout and IMMEDIATE transactions: what a team sets for SQLite behind
    # several workers (a deferred transaction that upgrades to a write fails at once with
    # "database is locked" instead of waiting).
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30, "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
TEMPLATES: list[dict] = []
LOGGING = {"version": 1, "disable_existing_loggers": False,
           "root": {"handlers": [], "level": "WARNING"}}
