from __future__ import annotations

from django.urls import path

from bench.relational.api import api

urlpatterns = [path("api/v1/", api.urls)]
