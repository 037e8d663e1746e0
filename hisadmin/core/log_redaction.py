"""No text a user typed reaches a log: exceptions are logged by class, never by message.

An exception's message may quote input (a domain error names the value it refused; a
database error may carry a statement's parameters), so a log line that formats an
exception, or a traceback's last line, could copy a patient's name, an allergy's reaction
or a note into a log file. :func:`install` wraps the log record factory, so every record
of every logger (Django's, Celery's, ours; whichever handler or test capture reads it) is
made with:

* an exception among its arguments (``log.error("…%s", exc)``) replaced by its class name;
* a traceback (``log.exception``, ``exc_info=True``) whose frames are kept (file, line,
  function: code, not data) and whose exception lines say the class only, for the causes
  and contexts too;
* Celery's task-failure ``exc`` argument (already text: ``Name('message')``) cut to the name;
* the record's own exception's message among its arguments, as Django's request logger
  passes it for a 400 (``"%s: %s", str(exc), path``: "“<typed sort key>” is not …"),
  replaced by the class name.

Log calls still say what happened with ids, counts and class names (``type(exc).__name__``).
"""

from __future__ import annotations

import logging
import re
import traceback
from types import TracebackType
from typing import Any

_INSTALLED = "_his_no_typed_text"
_EXC_TEXT = re.compile(r"^([A-Za-z_][\w.]*)")  # the class name at the head of "Name('…')"


def _name(exc: BaseException) -> str:
    return type(exc).__name__


def _clean(value: Any) -> Any:
    return f"<{_name(value)}>" if isinstance(value, BaseException) else value


def redacted_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` and of its causes and contexts, each exception by its
    qualified class name only."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    chain: list[tuple[BaseException, str]] = []
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append((current, ""))
        if current.__cause__ is not None:
            chain[-1] = (current, "\nThe above exception was the direct cause of the "
                                  "following exception:\n\n")
            current = current.__cause__
        elif current.__context__ is not None and not current.__suppress_context__:
            chain[-1] = (current, "\nDuring handling of the above exception, another "
                                  "exception occurred:\n\n")
            current = current.__context__
        else:
            current = None
    for one, joiner in reversed(chain):
        tb: TracebackType | None = one.__traceback__
        if tb is not None:
            parts.append("Traceback (most recent call last):\n")
            parts.extend(traceback.format_tb(tb))
        kind = type(one)
        parts.append(f"{kind.__module__}.{kind.__qualname__} (message not logged)\n")
        parts.append(joiner)
    return "".join(parts).rstrip("\n")


def _messages_of(exc: BaseException | None) -> set[str]:
    """The texts ``exc``'s message is logged as: itself, and escaped as Django escapes a
    request log's arguments (non-ASCII as ``\\u201c``)."""
    text = str(exc) if exc is not None else ""
    return {text, text.encode("unicode_escape").decode("ascii")} - {""}


def redact(record: logging.LogRecord) -> logging.LogRecord:
    """``record`` with no exception message left in it (see the module's contract)."""
    if isinstance(record.msg, BaseException):
        record.msg = f"<{_name(record.msg)}>"
    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(record.args, tuple):
        said = _messages_of(exc)
        record.args = tuple(f"<{_name(exc)}>" if exc is not None and a in said else _clean(a)
                            for a in record.args)
    elif isinstance(record.args, dict):
        args = {k: _clean(v) for k, v in record.args.items()}
        if isinstance(args.get("exc"), str) and record.name.startswith("celery"):
            found = _EXC_TEXT.match(args["exc"])
            args["exc"] = f"<{found.group(1) if found else 'exception'}>"
        record.args = args
    if record.exc_info and record.exc_info[1] is not None:
        record.exc_text = redacted_traceback(record.exc_info[1])
    return record


def install() -> None:
    """Wrap the log record factory (once per process)."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, _INSTALLED, False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return redact(previous(*args, **kwargs))

    setattr(factory, _INSTALLED, True)
    logging.setLogRecordFactory(factory)
