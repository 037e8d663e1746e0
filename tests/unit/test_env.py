"""Settings read from the environment: accepted spellings, defaults, and start-up errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from hisadmin.core.env import envbool, envint, envlist, envstr

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "Yes", "on", " on ", "\ttrue\n"])
def test_it_reads_true_spellings(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("HIS_FLAG", value)
    assert envbool("HIS_FLAG", False) is True


@pytest.mark.parametrize("value", ["0", "false", "False", "NO", "off", "  Off  "])
def test_it_reads_false_spellings(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("HIS_FLAG", value)
    assert envbool("HIS_FLAG", True) is False


def test_it_uses_the_boolean_default_when_unset_or_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIS_FLAG", raising=False)
    assert envbool("HIS_FLAG", True) is True
    monkeypatch.setenv("HIS_FLAG", "")
    assert envbool("HIS_FLAG", False) is False


@pytest.mark.parametrize("value", ["maybe", "ture", "2", "y", "t", "enabled", "   "])
def test_it_stops_on_an_unreadable_boolean(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("HIS_FLAG", value)
    with pytest.raises(ImproperlyConfigured) as error:
        envbool("HIS_FLAG", False)
    message = str(error.value)
    assert f"HIS_FLAG={value!r}" in message
    for word in ("1", "0", "true", "false", "yes", "no", "on", "off"):
        assert word in message
    assert "default (false)" in message


@pytest.mark.parametrize(("value", "expected"), [("24", 24), (" 7 ", 7), ("-1", -1), ("0", 0)])
def test_it_reads_integers(monkeypatch: pytest.MonkeyPatch, value: str, expected: int) -> None:
    monkeypatch.setenv("HIS_NUMBER", value)
    assert envint("HIS_NUMBER", 3) == expected


def test_it_uses_the_integer_default_when_unset_or_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIS_NUMBER", raising=False)
    assert envint("HIS_NUMBER", 4) == 4
    monkeypatch.setenv("HIS_NUMBER", "")
    assert envint("HIS_NUMBER", 4) == 4


@pytest.mark.parametrize("value", ["four", "4.5", "4h", "0x10", " "])
def test_it_stops_on_an_unreadable_integer(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("HIS_NUMBER", value)
    with pytest.raises(ImproperlyConfigured) as error:
        envint("HIS_NUMBER", 24)
    message = str(error.value)
    assert f"HIS_NUMBER={value!r} is not an integer" in message
    assert "whole number" in message
    assert "default (24)" in message


def test_it_reads_strings_and_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIS_LIST", " a.example, ,b.example ")
    monkeypatch.delenv("HIS_TEXT", raising=False)
    assert envlist("HIS_LIST", ["x"]) == ["a.example", "b.example"]
    assert envstr("HIS_TEXT", "fallback") == "fallback"


def test_it_stops_manage_py_check_on_an_unreadable_setting(tmp_path: Path) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hisadmin.settings", "DEBUG": "maybe",
           "HIS_VAR_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "ImproperlyConfigured: DEBUG='maybe' is not a boolean" in result.stderr
    assert "true, yes, on, 0, false, no, off" in result.stderr
