"""Is a Kafka broker at an address? One ApiVersions v0 round trip says, or says what is wrong."""

from __future__ import annotations

import asyncio

from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse

from .address import Address
from .request_connection import NoAnswerError, RequestConnection

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
    except NoAnswerError as error:
        raise NotABrokerError(str(error)) from None


async def _round_trip(address: Address) -> None:
    connection = await RequestConnection.open(address, "groupspec-probe")
    try:
        await connection.call(ApiVersionsRequest(), ApiVersionsResponse, 0)
    finally:
        connection.close()
