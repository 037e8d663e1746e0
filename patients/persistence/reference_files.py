"""Reading a hospital's reference data files, each entry with the file and line it is on.

A file holds one type: ``<Type>.json`` (as shipped, ``Ward.json``…) with a JSON list of
entries, or any ``*.json`` whose content is ``{"type": "<Type>", "entries": [...]}``. A
directory stands for the ``*.json`` files in it. Anything unreadable is a
:class:`ReferenceFileError` naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patients.domain.errors import InvalidInput
from patients.persistence.reference import TYPES

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class ReferenceFileError(InvalidInput):
    """A reference data file that cannot be read as one; the message says where."""

    title = "Invalid reference data file"


@dataclass(frozen=True)
class SourcedEntry:
    type_name: str
    entry: dict[str, Any]
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file} line {self.line}"


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _skip(text: str, i: int, also: str = "") -> int:
    while i < len(text) and text[i] in _SPACE + also:
        i += 1
    return i


def _entries(text: str, start: int, name: str) -> Iterator[tuple[Any, int]]:
    """Each element of the JSON list at ``start`` with its offset."""
    i = _skip(text, start)
    if text[i:i + 1] != "[":
        raise ReferenceFileError(f"{name} line {_line(text, i)}: expected a list of entries.",
                                 field="file")
    i = _skip(text, i + 1)
    while i < len(text) and text[i] != "]":
        try:
            value, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise ReferenceFileError(f"{name} line {exc.lineno}: {exc.msg}.",
                                     field="file") from None
        yield value, i
        i = _skip(text, end)
        if text[i:i + 1] == ",":
            i = _skip(text, i + 1)
        elif text[i:i + 1] != "]":
            raise ReferenceFileError(f"{name} line {_line(text, i)}: expected ',' or ']'.",
                                     field="file")


def read_file(path: Path) -> list[SourcedEntry]:
    name = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReferenceFileError(f"{name}: cannot be read ({exc}).", field="file") from None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReferenceFileError(f"{name} line {exc.lineno}: {exc.msg}.", field="file") from None
    if isinstance(whole, dict):
        type_name = whole.get("type")
        if type_name not in TYPES or not isinstance(whole.get("entries"), list):
            raise ReferenceFileError(
                f'{name} line 1: give {{"type": one of {", ".join(TYPES)}, "entries": [...]}}.',
                field="file")
        start = text.index("[", text.index('"entries"'))
    else:
        type_name = path.stem
        if type_name not in TYPES:
            raise ReferenceFileError(
                f"{name}: the file name says no type; name it <Type>.json, Type one of "
                f"{', '.join(TYPES)}, or give {{\"type\": …, \"entries\": […]}}.", field="file")
        start = 0
    found = []
    for value, offset in _entries(text, start, name):
        line = _line(text, offset)
        if not isinstance(value, dict):
            raise ReferenceFileError(f"{name} line {line}: each entry is an object.",
                                     field="file")
        found.append(SourcedEntry(type_name, value, name, line))
    return found


def read_paths(paths: Iterable[str | Path]) -> list[SourcedEntry]:
    """Every entry of the files (a directory: its ``*.json`` files, by name)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            files.append(path)
        else:
            raise ReferenceFileError(f"{raw}: no such file or directory.", field="file")
    if not files:
        raise ReferenceFileError("No reference data files given.", field="file")
    entries = [e for f in files for e in read_file(f)]
    order = {t: i for i, t in enumerate(TYPES)}  # referenced types first
    return sorted(entries, key=lambda e: order[e.type_name])
