"""What both directions share: MLLP framing and HL7 v2 timestamps.

MLLP (the Minimal Lower Layer Protocol) wraps each message in a start block ``0x0B`` and an
end block ``0x1C 0x0D``; segments inside are separated by carriage returns.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

START_BLOCK = b"\x0b"
END_BLOCK = b"\x1c\x0d"
SEGMENT_SEPARATOR = "\r"


def frame(message: str) -> bytes:
    """``message`` (segments joined by ``\\r``) as one MLLP frame, UTF-8."""
    return START_BLOCK + message.encode("utf-8") + END_BLOCK


def unframe(buffer: bytes) -> tuple[str | None, bytes]:
    """The first complete frame's message in ``buffer`` and what follows it; ``(None,
    buffer)`` while no end block has arrived. Bytes before a start block are dropped (noise
    between frames)."""
    end = buffer.find(END_BLOCK)
    if end < 0:
        return None, buffer
    start = buffer.rfind(START_BLOCK, 0, end)
    body = buffer[start + 1:end] if start >= 0 else buffer[:end]
    return body.decode("utf-8", errors="replace"), buffer[end + len(END_BLOCK):]


def hl7_timestamp(moment: datetime | None = None, tz: tzinfo | None = None) -> str:
    """A DTM to the second with its offset (``YYYYMMDDHHMMSS+ZZZZ``), in ``tz`` (UTC when
    not given); now when ``moment`` is None."""
    moment = (moment or datetime.now(UTC)).astimezone(tz or UTC)
    return moment.strftime("%Y%m%d%H%M%S%z")
