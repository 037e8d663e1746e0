#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.umask(0o077)  # before anything is created: var/'s files are the owner's alone
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")
    from django.conf import settings
    from django.core.management import execute_from_command_line

    from hisadmin.core.files import secure_data_dir

    if sys.argv[1:2] != ["check_security"]:  # which reports the files as it finds them
        secure_data_dir(settings.VAR_DIR)  # what an earlier run left readable is no more
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
