"""The web server's entry point (gunicorn ``hisadmin.wsgi``)."""

from __future__ import annotations

import os

os.umask(0o077)  # first: every file this process creates under var/ is the owner's alone

import django  # noqa: E402 - after the umask
from django.conf import settings  # noqa: E402

from hisadmin.core import access_log  # noqa: E402
from hisadmin.core.files import secure_data_dir  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")
secure_data_dir(settings.VAR_DIR)
django.setup(set_prefix=False)  # what django.core.wsgi.get_wsgi_application does first

from hisadmin.middleware import TwoChainHandler  # noqa: E402 - needs the apps loaded

# Bearer-token API calls take a shorter middleware chain (see TwoChainHandler).
application = TwoChainHandler()
# A server process: views of records are written in the background, off the request path
# (unless the site chose to pay a write per read rather than risk a second's records).
if not settings.ACCESS_LOG_INLINE:
    access_log.start_writer()
