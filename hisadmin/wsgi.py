from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

from hisadmin.core import access_log

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hisadmin.settings")
application = get_wsgi_application()
# A server process: views of records are written in the background, off the request path.
access_log.start_writer()
