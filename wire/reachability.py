"""Is a Kafka broker at an address? One ApiVersions v0 round trip says, or says what is wrong."""

from __future__ import annotations

import asyncio
import struct

from kafka.protocol.metadata.api_versions import ApiVersionsRequest

from .address import Address

_LENGTH = struct.Struct(">i")
_CORRELATION_ID = 0x67737063  # arbitrary, recognisable in a capture ("gspc")
PROBE_TIMEOUT_S = 10.0


class NotABrokerError(Exception):
    """Nothing listens at the address, or what answers does not speak Kafka's protocol."""


async def probe_broker(address: Address, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Return if a Kafka broker answers ApiVersions v0 at `address`; else raise
    `NotABrokerError` saying what happened (refused, timed out, closed, not Kafka)."""
    try:
        await asyncio.wait_for(_round_trip(address), timeout_s)
    except TimeoutError:
        raise NotABrokerError(
            f"{address}: no ApiVersions answer within {timeout_s:g} s (not a Kafka broker?)"
        ) from None
    except OSError as error:
        raise NotABrokerError(
            f"{address} broke the connection during ApiVersions ({_reason(error)})"
        ) from None


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


async def _round_trip(address: Address) -> None:
    try:
        reader, writer = await asyncio.open_connection(address.host, address.port)
    except OSError as error:
        raise NotABrokerError(f"nothing listening at {address} ({_reason(error)})") from None
    try:
        request = ApiVersionsRequest()
        request.with_header(correlation_id=_CORRELATION_ID, client_id="groupspec-probe")
        writer.write(bytes(request.encode(version=0, header=True, framed=True)))
        await writer.drain()
        try:
            prefix = await reader.readexactly(_LENGTH.size)
            (length,) = _LENGTH.unpack(prefix)
            if not 4 <= length <= 1 << 20:
                raise NotABrokerError(
                    f"{address} answered ApiVersions with a frame length of {length} "
                    f"(first bytes {prefix!r}): not the Kafka protocol"
                )
            frame = await reader.readexactly(length)
        except asyncio.IncompleteReadError as cut:
            raise NotABrokerError(
                f"{address} closed the connection after {len(cut.partial)} bytes instead of "
                "answering ApiVersions: not a Kafka broker?"
            ) from None
        (correlation_id,) = _LENGTH.unpack_from(frame, 0)
        if correlation_id != _CORRELATION_ID:
            raise NotABrokerError(
                f"{address} answered ApiVersions with correlation id {correlation_id}, "
                f"not {_CORRELATION_ID}: not the Kafka protocol"
            )
    finally:
        writer.close()
