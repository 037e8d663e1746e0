from __future__ import annotations

from django.contrib import admin

from hisadmin.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "created", "last_used", "revoked")
    list_filter = ("revoked",)
    readonly_fields = ("prefix", "created", "last_used")
    fields = ("user", "name", "revoked", "prefix", "created", "last_used")

    def has_add_permission(self, request: object) -> bool:
        return False  # issued with `manage.py create_api_token`, which shows the secret once
