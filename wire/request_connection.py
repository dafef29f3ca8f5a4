"""One client connection to a Kafka broker: send a request, await its response, one at a time.

The bench's load generator speaks to any broker through it, so every failure mode a broker can
show (refusing, never answering, closing, answering another correlation id) becomes a
`NoAnswerError` whose message names the request, never a hang or a decoder traceback.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from .address import Address

_LENGTH = struct.Struct(">i")
MAX_RESPONSE_BYTES = 100 << 20


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


class NoAnswerError(Exception):
    """The broker did not answer a request with a response to it (the message says how)."""


class RequestConnection:
    """A connection with at most one request in flight, as a group member's connection is."""

    def __init__(
        self,
        address: Address,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        client_id: str,
    ) -> None:
        self.address = address
        self._reader, self._writer = reader, writer
        self._client_id = client_id
        self._correlation_id = 0

    @classmethod
    async def open(cls, address: Address, client_id: str) -> RequestConnection:
        """Connect to `address` (NoAnswerError if nothing accepts)."""
        try:
            reader, writer = await asyncio.open_connection(address.host, address.port)
        except OSError as error:
            raise NoAnswerError(f"nothing listening at {address} ({_reason(error)})") from None
        return cls(address, reader, writer, client_id)

    def send(self, request: Any, version: int) -> int:
        """Write `request` at `version`; its correlation id (the response is read by `receive`)."""
        self._correlation_id += 1
        request.with_header(correlation_id=self._correlation_id, client_id=self._client_id)
        self._writer.write(bytes(request.encode(version=version, header=True, framed=True)))
        return self._correlation_id

    async def receive(self, response_class: Any, version: int, correlation_id: int) -> Any:
        """Read the response to the request sent with `correlation_id`."""
        name = f"{response_class.__name__.removesuffix('Response')} v{version}"
        try:
            prefix = await self._reader.readexactly(_LENGTH.size)
            (length,) = _LENGTH.unpack(prefix)
            if not _LENGTH.size <= length <= MAX_RESPONSE_BYTES:
                raise NoAnswerError(
                    f"{self.address} answered {name} with a frame length of {length} "
                    f"(first bytes {prefix!r}): not the Kafka protocol"
                )
            frame = await self._reader.readexactly(length)
        except asyncio.IncompleteReadError as cut:
            raise NoAnswerError(
                f"{self.address} closed the connection after {len(cut.partial)} bytes instead "
                f"of answering {name}"
            ) from None
        except OSError as error:
            raise NoAnswerError(
                f"{self.address} broke the connection during {name} ({_reason(error)})"
            ) from None
        (answered,) = _LENGTH.unpack_from(frame, 0)
        if answered != correlation_id:
            raise NoAnswerError(
                f"{self.address} answered {name} with correlation id {answered}, "
                f"not {correlation_id}: not the Kafka protocol"
            )
        try:
            return response_class.decode(frame, version=version, header=True)
        except Exception as error:  # the generated decoder raises many kinds on garbage
            raise NoAnswerError(
                f"{self.address} answered {name} with bytes that do not decode ({error})"
            ) from None

    async def call(self, request: Any, response_class: Any, version: int) -> Any:
        """Send `request` and return its response (a caller bounds the wait, if it must)."""
        return await self.receive(response_class, version, self.send(request, version))

    def close(self) -> None:
        """Close the connection (a member leaving without LeaveGroup)."""
        self._writer.close()
