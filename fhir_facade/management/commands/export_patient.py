"""Export one patient's whole record as a FHIR Bundle (a subject-access request)."""

from __future__ import annotations

import getpass
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from rich.console import Console

from fhir_facade.envelopes import FhirError
from fhir_facade.everything import everything
from hisadmin.core import access_log, policy
from hisadmin.core.access_log import Access, Channel
from hisadmin.core.store import get_store
from patients.persistence import queries


class Command(BaseCommand):
    help = (
        "Write a patient's whole record (demographics, allergies, admissions, orders, "
        "administrations, results, audit trail) as a FHIR R4 Bundle in JSON, to standard "
        "output or --out FILE; the same Bundle as GET /fhir/R4/Patient/{id}/$everything."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("mrn", help="the patient's MRN")
        parser.add_argument(
            "--out",
            default=None,
            metavar="FILE",
            help="write here instead of standard output (never half a file)",
        )
        parser.add_argument(
            "--by",
            default=None,
            metavar="USERNAME",
            help="the staff member the export is made for, as the access audit records it "
            "(default: the server account running the command)",
        )
        parser.add_argument(
            "--base",
            default=None,
            metavar="URL",
            help="the FHIR server's base URL, to give entries their fullUrl "
            "(e.g. https://his.hospital.example/fhir/R4)",
        )

    def handle(
        self,
        *args: Any,
        mrn: str,
        out: str | None,
        base: str | None,
        by: str | None,
        **options: Any,
    ) -> None:
        if base is not None and not base.startswith(("https://", "http://")):
            raise CommandError(f"--base {base[:80]!r} is not an http(s) URL")
        if out is not None and not Path(out).parent.is_dir():
            raise CommandError(f"--out {out}: there is no directory {Path(out).parent}")
        reader = _reader(by)
        store = get_store()
        patient = queries.by_mrn(store, mrn) if mrn.strip() else None
        if patient is None:
            raise CommandError(f"no patient with MRN {mrn[:40]!r}")
        # Status on standard error: standard output carries only the Bundle.
        with Console(stderr=True).status("reading the record"):
            try:
                bundle = everything(
                    store, patient["patientId"], base=base.rstrip("/") if base else None
                )
            except FhirError as exc:  # removed between the lookup and the read
                raise CommandError(exc.diagnostics) from exc
        # An export is a view of the whole record: the access audit shows it beside the others.
        access_log.record(
            Access(
                at=timezone.now(),
                patient_id=patient["patientId"],
                part="Whole record, exported (FHIR Bundle)",
                channel=Channel.FHIR,
                user_id=reader[0],
                username=reader[1],
                client="server command line",
            )
        )
        text = json.dumps(json.loads(bundle.model_dump_json()), indent=2, ensure_ascii=False)
        if out is None:
            self.stdout.write(text)
            return
        _write_whole(Path(out), text + "\n")
        self.stderr.write(f"{bundle.total} resources written to {out}")


def _reader(username: str | None) -> tuple[int | None, str]:
    """(user id, username) the access audit records for this export: ``--by`` names a
    staff member who may read the record themself (the policy's ``read``, as the FHIR
    ``$everything`` that answers the same Bundle asks), never an admin-only account."""
    if username is None:
        return None, f"{getpass.getuser()} (server account)"[:150]
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise CommandError(f"--by {username[:40]!r}: no active user of that name")
    if not policy.allows(user, "read"):
        raise CommandError(f"--by {username[:40]!r}: may not read patients' records (the "
                           "clerk, clinician or nurse role); nothing exported")
    return user.pk, user.get_username()


def _write_whole(path: Path, text: str) -> None:
    """Write through a temporary file in the same directory, then rename: a failure leaves
    no partial export behind (nor a previous file replaced by half of one)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(temporary, 0o600)  # the record of one patient: readable by the owner only
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
