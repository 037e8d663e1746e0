"""pytest plugin for suites that test this product from outside (and for its own tests).

Enabled by the ``pytest11`` entry point ``hisadmin`` (or ``-p testkit.plugin``), with
pytest-django and ``DJANGO_SETTINGS_MODULE=hisadmin.settings``. Plugins are imported before
pytest-django sets Django up, so this module only registers :mod:`testkit.fixtures` (the
fixtures: ``his_store``, ``drain_worklists``, ``his_reference_data``, ``his_user``,
``his_api_client``, ``his_patient``) when pytest configures, by which time Django is ready.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.import_plugin("testkit.fixtures")
