from __future__ import annotations

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from accounts import idle, two_factor
from fhir_facade.urls import fhir_urls
from hisadmin.api import TokenAuth, api
from hisadmin.api import not_found as api_not_found
from operations.health import healthz

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico before reading a page's <link rel="icon">.
    path("favicon.ico", RedirectView.as_view(url=static("hisadmin/favicon.svg"), permanent=True)),
    path("api/v1/", api.urls),
    # FHIR R4 facade, read-only; the same bearer tokens as the JSON API (or a session).
    path("fhir/R4/", include(fhir_urls(bearer=TokenAuth().authenticate))),
    # Before the admin's own: the login with the admins' second step, the idle-session poll.
    path("admin/login/", two_factor.login_view, name="his_login"),
    path("admin/two-factor/", two_factor.second_factor, name="his_two_factor"),
    path("admin/session/", idle.session_status, name="his_session"),
    path("admin/", admin.site.urls),
]
# Keep last: anything else under /api is a JSON 404 problem, never the HTML page.
urlpatterns += [re_path(r"^api(?:/|$)", api_not_found)]

# Error pages in the admin's look, with the way back (hisadmin/errors.py).
handler400 = "hisadmin.errors.bad_request"
handler403 = "hisadmin.errors.permission_denied"
handler404 = "hisadmin.errors.page_not_found"
handler500 = "hisadmin.errors.server_error"
