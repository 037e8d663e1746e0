"""``manage.py check_security``: the security settings and files an operator must get right.

Reports, each as ``ok`` or its findings: file modes (anything of the data directory, the
embedded store or the SQLite database open to group or others), the secret key (length,
the development default, its fallbacks), passwords (Django's validators, minimum length
12), tokens and logins (two-factor for admins, API tokens of deactivated users still
valid), and Django's own ``check --deploy``. A finding exits non-zero in production
(``HISADMIN_ENV=production``) or with ``--strict``; in development it is reported only
(plain HTTP on localhost is what ``make run`` means to serve).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser, SystemCheckError
from django.db import DatabaseError

from accounts.models import ApiToken
from hisadmin.core import files

VALIDATORS = "django.contrib.auth.password_validation."
REQUIRED_VALIDATORS = ("UserAttributeSimilarityValidator", "MinimumLengthValidator",
                       "CommonPasswordValidator", "NumericPasswordValidator")
MIN_PASSWORD_LENGTH = 12
SHOWN = 20  # file findings listed one by one; past that, a count


def file_findings() -> Iterator[str]:
    """Paths of the data directory and the embedded files that group or others may use."""
    roots = [Path(settings.VAR_DIR)]
    store = settings.DOCUMENT_STORE
    if store.get("backend") == "embedded":
        roots += [Path(f"{store['path']}{suffix}") for suffix in ("", "-wal", "-shm")]
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        roots.append(Path(str(db["NAME"])))
    seen: set[Path] = set()
    found = [(p, m) for root in roots for p, m in files.open_to_others(root)]
    found = [(p, m) for p, m in found if not (p in seen or seen.add(p))]  # type: ignore[func-returns-value]
    for path, mode in found[:SHOWN]:
        yield f"{path} is {mode:o}: group or others may use it (should be 600, a directory 700)"
    if len(found) > SHOWN:
        yield f"… and {len(found) - SHOWN} more under {settings.VAR_DIR}"


def secret_key_findings() -> Iterator[str]:
    keys = [("SECRET_KEY", settings.SECRET_KEY)] + [
        (f"SECRET_KEY_FALLBACKS[{i}]", k) for i, k in enumerate(settings.SECRET_KEY_FALLBACKS)]
    for name, key in keys:
        if key.startswith("insecure-dev-key"):
            yield f"{name} is the development default: set 50+ random characters"
        elif len(key) < settings.MIN_SECRET_KEY_LENGTH or len(set(key)) < 5:
            yield f"{name} has {len(key)} characters: use {settings.MIN_SECRET_KEY_LENGTH}+ random ones"


def password_findings() -> Iterator[str]:
    configured = {v["NAME"].removeprefix(VALIDATORS): v.get("OPTIONS", {})
                  for v in settings.AUTH_PASSWORD_VALIDATORS}
    for name in REQUIRED_VALIDATORS:
        if name not in configured:
            yield f"AUTH_PASSWORD_VALIDATORS lacks {name}"
    length = configured.get("MinimumLengthValidator", {}).get("min_length", 8)
    if "MinimumLengthValidator" in configured and length < MIN_PASSWORD_LENGTH:
        yield f"passwords may have {length} characters: ask for {MIN_PASSWORD_LENGTH} at least"


def token_findings() -> Iterator[str]:
    if not settings.ADMIN_TWO_FACTOR:
        yield "ADMIN_TWO_FACTOR is off: admins log in with a password alone"
    try:
        stale = ApiToken.objects.filter(revoked=False, user__is_active=False).count()
    except DatabaseError:
        yield "the database could not be read (run migrate): API tokens not checked"
        return
    if stale:
        yield f"{stale} API token(s) of deactivated users are not revoked"


def deploy_findings() -> Iterator[str]:
    out = io.StringIO()
    try:
        call_command("check", deploy=True, fail_level="WARNING", stdout=out, stderr=out)
    except SystemCheckError as exc:
        yield from (line for line in str(exc).splitlines() if line.strip().startswith("?"))
        if not any(line.strip().startswith("?") for line in str(exc).splitlines()):
            yield str(exc).strip()


SECTIONS = (
    ("files", file_findings),
    ("secret key", secret_key_findings),
    ("passwords", password_findings),
    ("tokens and logins", token_findings),
    ("check --deploy", deploy_findings),
)


class Command(BaseCommand):
    help = ("Report file modes under the data directory, the secret key, password and token "
            "settings, and Django's check --deploy; non-zero on a finding in production.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--strict", action="store_true",
                            help="exit non-zero on a finding outside production too")

    def handle(self, *args: Any, strict: bool, **options: Any) -> None:
        total = 0
        for title, findings in SECTIONS:
            found = list(findings())
            total += len(found)
            if not found:
                self.stdout.write(f"{title}: ok")
                continue
            self.stdout.write(self.style.WARNING(f"{title}: {len(found)} finding(s)"))
            for line in found:
                self.stdout.write(f"  - {line}")
        production = settings.HISADMIN_ENV == "production"
        if total and (production or strict):
            raise CommandError(f"{total} security finding(s)")
        if total:
            self.stdout.write(f"{total} finding(s); not fatal in {settings.HISADMIN_ENV} "
                              "(HISADMIN_ENV=production or --strict makes them so)")
        else:
            self.stdout.write(self.style.SUCCESS("no findings"))
