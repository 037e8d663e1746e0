"""Helpers for browser tests: screenshots of a page at the widths looked at, and users with
a full name (what the pages show of a nurse)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

WIDTHS = (1024, 1440)


def at_widths(page: Any, folder: Path, name: str, *, height: int = 900,
              widths: Sequence[int] = WIDTHS) -> None:
    """Full-page screenshots ``<name>-<width>.png`` in ``folder``, one per width."""
    for width in each_width(page, widths=widths, height=height):
        page.screenshot(path=str(folder / f"{name}-{width}.png"), full_page=True)


def each_width(page: Any, *, widths: Sequence[int] = WIDTHS, height: int = 900
               ) -> Iterator[int]:
    """Each width in turn, the page resized to it, and back to the first afterwards: a
    browser test runs its flow once, at the first width, and looks at the screen in each."""
    for width in widths:
        page.set_viewport_size({"width": width, "height": height})
        yield width
    page.set_viewport_size({"width": widths[0], "height": height})


def named_user(make_user: Callable[..., Any], username: str, first: str, last: str,
               *roles: str) -> Any:
    """A user with these roles and a first and last name."""
    user = make_user(username, *roles)
    user.first_name, user.last_name = first, last
    user.save()
    return user


def signed_in(browser: Any, base: str, username: str, *, width: int = 1024,
              height: int = 900) -> tuple[Any, Any]:
    """A new browser context and its page, signed in as ``username`` (demo password)."""
    from tests.web.test_browser_flow import login

    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    login(page, base, username)
    return ctx, page
