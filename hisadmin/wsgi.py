from __future__ import annotations

import os

import django
from django.conf import settings

from hisadmin.core import access_log

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")
django.setup(set_prefix=False)  # what django.core.wsgi.get_wsgi_application does first

from hisadmin.middleware import TwoChainHandler  # noqa: E402 - needs the apps loaded

# Bearer-token API calls take a shorter middleware chain (see TwoChainHandler).
application = TwoChainHandler()
# A server process: views of records are written in the background, off the request path
# (unless the site chose to pay a write per read rather than risk a second's records).
if not settings.ACCESS_LOG_INLINE:
    access_log.start_writer()
