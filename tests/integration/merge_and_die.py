"""Run one merge in a process of its own that SIGKILLs itself after the given number of the
saga's steps (0: never): ``python tests/integration/merge_and_die.py SURVIVOR RETIRED STEPS``.
Parts hold one document each, so a small record has several copy steps to die between."""

from __future__ import annotations

import os
import signal
import sys

import django


def main(survivor: str, retired: str, steps: int) -> None:
    django.setup()
    from cosmos_backend.uow import UnitOfWork  # noqa: PLC0415 - after django.setup()
    from hisadmin.core.actor import Actor  # noqa: PLC0415
    from hisadmin.core.store import get_store  # noqa: PLC0415
    from patients.persistence import merges as store_of  # noqa: PLC0415
    from patients.use_cases import merges  # noqa: PLC0415

    store_of.PART_SIZE = 1
    done = []

    def checkpoint(step: str) -> None:
        done.append(step)
        if len(done) == steps:
            os.kill(os.getpid(), signal.SIGKILL)

    merges._checkpoint = checkpoint
    merges.merge_patients(merges.MergePatients(survivor, retired, "Registered twice (chaos)"),
                          UnitOfWork(get_store()),
                          actor=Actor(id="31", username="rclerk", roles=("clerk",)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
