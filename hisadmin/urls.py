from __future__ import annotations

from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView

from hisadmin.api import api
from hisadmin.health import healthz

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
    path("healthz", healthz, name="healthz"),
    path("api/v1/", api.urls),
    path("admin/", admin.site.urls),
]
