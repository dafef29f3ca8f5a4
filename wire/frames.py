"""Kafka's framing on a byte stream: an int32 length, then that many bytes.

`FrameSplitter` is fed whatever chunks a socket yields and hands back each complete frame, so a
proxy can forward bytes as they come and still see whole requests and responses. A length no
broker or client would send ends the splitting: the stream is not Kafka's protocol (or is out of
step), and the splitter says why once and ignores the rest.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

_LENGTH = struct.Struct(">i")
DEFAULT_MAX_FRAME_BYTES = 100 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame: its body (without the length prefix) and its bytes as sent (with it)."""

    body: bytes

    @property
    def wire(self) -> bytes:
        """The frame as it travels: length prefix and body."""
        return _LENGTH.pack(len(self.body)) + self.body


class FrameSplitter:
    """Splits a byte stream into frames; see the module docstring."""

    def __init__(
        self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, min_frame_bytes: int = 4
    ) -> None:
        self._buffer = bytearray()
        self._max = max_frame_bytes
        self._min = min_frame_bytes
        self.broken: str | None = None

    def feed(self, chunk: bytes) -> list[Frame]:
        """The frames `chunk` completes, in order (none once the stream is broken)."""
        if self.broken is not None:
            return []
        self._buffer += chunk
        frames: list[Frame] = []
        while len(self._buffer) >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(self._buffer, 0)
            if not self._min <= length <= self._max:
                start = bytes(self._buffer[: _LENGTH.size])
                self.broken = (
                    f"frame length {length} (bytes {start!r}) outside [{self._min}, {self._max}]: "
                    "not the Kafka protocol, or out of step"
                )
                return frames
            end = _LENGTH.size + length
            if len(self._buffer) < end:
                break
            frames.append(Frame(bytes(self._buffer[_LENGTH.size : end])))
            del self._buffer[:end]
        return frames

    def take_pending(self) -> bytes:
        """The bytes fed but not part of a complete frame (emptied)."""
        pending = bytes(self._buffer)
        self._buffer.clear()
        return pending
