"""The admin site: Django admin chrome for ORM models and for the document-backed pages.

Apps add pages in their ``admin.py`` with :meth:`HisAdminSite.register_page`; each page
appears in the sidebar and index for users the policy allows its action, and is served through
``admin_view`` (login required, CSRF, never cached) with ``each_context`` for the chrome.
Each section of pages also gets an index at ``/admin/<section>/`` (unless a page takes that
route), and the home page is made for the user's roles (:mod:`hisadmin.home`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, get_script_prefix, get_urlconf, path, reverse
from django.utils.text import slugify

from hisadmin import home
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
    description: str = ""  # one line on the home page and the section's index


def section_slug(section: str) -> str:
    """``"Worklists"`` → ``"worklists"``: the section's index route and menu label."""
    return slugify(section).replace("-", "_")


class HisAdminSite(admin.AdminSite):
    site_header = "Hospital back office"
    site_title = "Hospital back office"
    index_title = "Work"
    enable_nav_sidebar = True
    site_url = None  # the admin is the whole site

    def __init__(self, name: str = "admin") -> None:
        super().__init__(name)
        self._pages: list[Page] = []
        self._urls: dict[tuple[str, str, str], str] = {}  # (urlconf, prefix, name) → address
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
                      order: int = 100, description: str = "") -> None:
        if any(p.name == name for p in self._pages):
            return  # admin autodiscovery may import a module twice in tests
        self._pages.append(Page(section, label, route, view, name, action, in_menu, order,
                                description))

    def get_urls(self) -> list[URLPattern]:
        pages = [path(p.route, self.admin_view(p.view), name=p.name) for p in self._pages]
        taken = {p.route for p in self._pages}
        indexes = [path(f"{slug}/", self.admin_view(self.section_index),
                        {"section": section}, name=f"section_{slug}")
                   for section, slug in self._sections().items() if f"{slug}/" not in taken]
        return pages + indexes + super().get_urls()

    def _sections(self) -> dict[str, str]:
        return {p.section: section_slug(p.section) for p in self._pages}

    def pages_for(self, request: HttpRequest) -> list[Page]:
        """The menu pages ``request.user`` may open, in menu order."""
        return [p for p in sorted(self._pages, key=lambda p: (p.order, p.label))
                if p.in_menu and (not p.action or policy.allows(request.user, p.action))]

    def page_label(self, name: str | None) -> str:
        """The label a page was registered with (its URL name when it is not a page)."""
        found = next((p.label for p in self._pages if p.name == name), None)
        return found or (name or "").replace("_", " ").capitalize()

    def url_of(self, name: str) -> str:
        """A page's address (``reverse``, kept: the menu names every page on every page,
        and the routes do not change while the process runs)."""
        key = (str(get_urlconf() or settings.ROOT_URLCONF), get_script_prefix(), name)
        found = self._urls.get(key)
        if found is None:
            found = self._urls[key] = reverse(f"{self.name}:{name}")
        return found

    def section_url(self, section: str) -> str:
        """The section's index: the page registered on its route, else the generic index."""
        slug = section_slug(section)
        for page in self._pages:
            if page.route == f"{slug}/":
                return self.url_of(page.name)
        return self.url_of(f"section_{slug}")

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        sections: dict[str, dict[str, Any]] = {}
        for page in self.pages_for(request):
            label = section_slug(page.section)
            if app_label is not None and app_label != label:
                continue
            section = sections.setdefault(page.section, {
                "name": page.section, "app_label": label,
                "app_url": self.section_url(page.section),
                "has_module_perms": True, "models": [],
            })
            url = self.url_of(page.name)
            section["models"].append({
                "name": page.label, "object_name": page.name, "perms": {"view": True},
                "admin_url": url, "add_url": None, "view_only": True,
                "description": page.description,
            })
        models = super().get_app_list(request, app_label) if _has_model_pages(request) else []
        return list(sections.values()) + models

    def section_index(self, request: HttpRequest, section: str) -> TemplateResponse:
        """``/admin/<section>/``: the section's pages this user may open, each described;
        a section with none for this user is a 404, as if it did not exist."""
        entries = [p for p in self.pages_for(request) if p.section == section]
        if not entries:
            raise Http404("There is no such page.")
        links = [{"label": p.label, "url": self.url_of(p.name),
                  "description": p.description} for p in entries]
        return self.render(request, "admin/his_section_index.html",
                           {"links": links, "section": section}, title=section)

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None
              ) -> TemplateResponse:
        """The home page, made for the user's roles: their worklists, their wards, finding
        a patient, and the administration they may do (no empty admin scaffolding)."""
        context = {**self.each_context(request), "title": "Home",
                   **home.home_context(request, self.get_app_list(request)),
                   **(extra_context or {})}
        request.current_app = self.name
        return TemplateResponse(request, "admin/index.html", context)

    def password_change(self, request: HttpRequest,
                        extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """Django's "change password", throttled as the login is and recorded
        (:mod:`accounts.password_reset`)."""
        from accounts import password_reset  # the shell's site, built once models load

        return password_reset.throttled_change(request, super().password_change,
                                               extra_context)

    def render(self, request: HttpRequest, template: str, context: dict[str, Any],
               *, title: str, status: int = 200) -> TemplateResponse:
        """Render a page with the admin chrome (header, sidebar, breadcrumbs base)."""
        ctx = {**self.each_context(request), "title": title, **context}
        return TemplateResponse(request, template, ctx, status=status)


def _has_model_pages(request: HttpRequest) -> bool:
    """Whether any of Django's model pages (users, API tokens, security events, …) may be
    in the user's menu: a superuser's, or of a user holding some model permission (the
    admin role's group, or one given by hand). Clinical roles hold none, and asking every
    model admin cost two queries and a permission set on each of their pages; this asks
    two exists() queries, once per request."""
    user = request.user
    found = getattr(request, "_his_model_pages", None)
    if found is None:
        found = bool(user.is_active and user.is_authenticated) and (
            user.is_superuser or user.user_permissions.exists()
            or user.groups.filter(permissions__isnull=False).exists())
        request._his_model_pages = found  # type: ignore[attr-defined]
    return found


class HisAdminConfig(AdminConfig):
    default_site = "hisadmin.admin_site.HisAdminSite"
