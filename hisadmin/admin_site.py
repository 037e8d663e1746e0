"""The admin site: Django admin chrome for ORM models and for the document-backed pages.

Apps add pages in their ``admin.py`` with :meth:`HisAdminSite.register_page`; each page
appears in the sidebar and index for users the policy allows its action, and is served through
``admin_view`` (login required, CSRF, never cached) with ``each_context`` for the chrome.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from hisadmin.core import policy


@dataclass(frozen=True)
class Page:
    section: str
    label: str
    route: str
    view: Callable[..., HttpResponse]
    name: str
    action: str | None = None  # the policy action a user needs to see it
    in_menu: bool = True
    order: int = 100


class HisAdminSite(admin.AdminSite):
    site_header = "Hospital back office"
    site_title = "Hospital back office"
    index_title = "Work"
    enable_nav_sidebar = True
    site_url = None  # the admin is the whole site

    def __init__(self, name: str = "admin") -> None:
        super().__init__(name)
        self._pages: list[Page] = []
        # The admin's own login form insists on is_staff; clinical users are not staff.
        # (Imported here: the site is built in AdminConfig.ready(), once models are loaded.)
        from django.contrib.auth.forms import AuthenticationForm

        self.login_form = AuthenticationForm

    def has_permission(self, request: HttpRequest) -> bool:
        # Clinical staff are not Django "staff": every active user may enter; each page and
        # model admin then checks its own role or model permission.
        return bool(request.user.is_active and request.user.is_authenticated)

    def register_page(self, *, section: str, label: str, route: str,
                      view: Callable[..., HttpResponse], name: str,
                      action: str | None = None, in_menu: bool = True,
                      order: int = 100) -> None:
        if any(p.name == name for p in self._pages):
            return  # admin autodiscovery may import a module twice in tests
        self._pages.append(Page(section, label, route, view, name, action, in_menu, order))

    def get_urls(self) -> list[URLPattern]:
        pages = [path(p.route, self.admin_view(p.view), name=p.name) for p in self._pages]
        return pages + super().get_urls()

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        sections: dict[str, dict[str, Any]] = {}
        for page in sorted(self._pages, key=lambda p: (p.order, p.label)):
            if not page.in_menu or (page.action and not policy.allows(request.user, page.action)):
                continue
            label = page.section.lower().replace(" ", "_")
            if app_label is not None and app_label != label:
                continue
            section = sections.setdefault(page.section, {
                "name": page.section, "app_label": label, "app_url": "",
                "has_module_perms": True, "models": [],
            })
            url = reverse(f"{self.name}:{page.name}")
            section["models"].append({
                "name": page.label, "object_name": page.name, "perms": {"view": True},
                "admin_url": url, "add_url": None, "view_only": True,
            })
        for section in sections.values():
            section["app_url"] = section["models"][0]["admin_url"]
        return list(sections.values()) + super().get_app_list(request, app_label)

    def render(self, request: HttpRequest, template: str, context: dict[str, Any],
               *, title: str, status: int = 200) -> TemplateResponse:
        """Render a page with the admin chrome (header, sidebar, breadcrumbs base)."""
        ctx = {**self.each_context(request), "title": title, **context}
        return TemplateResponse(request, template, ctx, status=status)


class HisAdminConfig(AdminConfig):
    default_site = "hisadmin.admin_site.HisAdminSite"
