from __future__ import annotations

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from hisadmin.core import access_log

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")
application = get_wsgi_application()
# A server process: views of records are written in the background, off the request path
# (unless the site chose to pay a write per read rather than risk a second's records).
if not settings.ACCESS_LOG_INLINE:
    access_log.start_writer()
