"""Is a starting Kafka broker ready to serve consumer groups? Asked the way a client would.

A broker that accepts connections has not necessarily created `__consumer_offsets` or loaded
it: a group's first requests would then be answered COORDINATOR_NOT_AVAILABLE or
COORDINATOR_LOAD_IN_PROGRESS, and a trace recorded right after start would begin with retries
that say nothing about the protocol. So readiness is three answers in a row: ApiVersions (the
broker serves requests), FindCoordinator without error for a group (the offsets topic exists and
has a leader; the first such request creates it), and OffsetFetch without error for that group
(its offsets partition is loaded). The group is never joined, so it leaves no group behind.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from kafka.protocol.consumer.group import OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

from groupspec.wire.address import Address
from groupspec.wire.request_connection import NoAnswerError, RequestConnection

READINESS_GROUP = "groupspec-readiness"
CLIENT_ID = "groupspec-readiness"
RETRY_S = 0.1
ANSWER_TIMEOUT_S = 10.0
NONE = 0
# While the offsets topic is being created or loaded (Kafka's ErrorCodes).
NOT_YET = frozenset({14, 15, 16})  # COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR


class NotReadyError(Exception):
    """The broker did not become ready: it stopped, answered with an error, or took too long."""


async def await_ready(
    address: Address,
    running: Callable[[], bool],
    timeout_s: float,
    answered: Callable[[], None] = lambda: None,
) -> None:
    """Return once the broker at `address` is ready for groups (see the module); NotReadyError
    if `running()` turns false first, an answer is an unexpected error, or `timeout_s` passes.
    `answered()` is called when ApiVersions is first answered."""
    deadline = time.monotonic() + timeout_s
    while True:
        connection = await connect_answered(address, running, deadline)
        answered()
        try:
            await _until_ready(connection, running, deadline)
            return
        except (NoAnswerError, TimeoutError):
            # The broker closed the connection or stalled while starting: connect again.
            _check(running, deadline, f"{address} stopped answering")
            await asyncio.sleep(RETRY_S)
        finally:
            connection.close()


async def connect_answered(
    address: Address, running: Callable[[], bool], deadline: float
) -> RequestConnection:
    """A connection to `address` whose ApiVersions was answered (retried until then);
    NotReadyError if `running()` turns false or `deadline` (monotonic) passes first."""
    while True:
        _check(running, deadline, f"nothing answered ApiVersions at {address}")
        try:
            connection = await RequestConnection.open(address, CLIENT_ID)
        except NoAnswerError:
            await asyncio.sleep(RETRY_S)
            continue
        try:
            await asyncio.wait_for(
                connection.call(ApiVersionsRequest(), ApiVersionsResponse, 0), ANSWER_TIMEOUT_S
            )
            return connection
        except (NoAnswerError, TimeoutError):
            connection.close()
            await asyncio.sleep(RETRY_S)


async def _until_ready(
    connection: RequestConnection, running: Callable[[], bool], deadline: float
) -> None:
    """FindCoordinator, then OffsetFetch, each repeated until it is answered without error."""
    find = FindCoordinatorRequest(key=READINESS_GROUP, key_type=0)
    await until_no_error(
        lambda: connection.call(find, FindCoordinatorResponse, 1),
        f"FindCoordinator for group {READINESS_GROUP}",
        running,
        deadline,
    )
    fetch = OffsetFetchRequest(group_id=READINESS_GROUP, topics=None)
    await until_no_error(
        lambda: connection.call(fetch, OffsetFetchResponse, 2),
        f"OffsetFetch for group {READINESS_GROUP}",
        running,
        deadline,
    )


async def until_no_error(
    call: Callable[[], Awaitable[Any]], api: str, running: Callable[[], bool], deadline: float
) -> Any:
    """Repeat `call` while it answers an error of a broker still starting (NOT_YET); its first
    answer without error. NotReadyError on another error, a stop or the deadline."""
    while True:
        response = await asyncio.wait_for(call(), ANSWER_TIMEOUT_S)
        code = response.error_code
        if code == NONE:
            return response
        if code not in NOT_YET:
            raise NotReadyError(f"{api} answered error {code}")
        _check(running, deadline, f"{api} still answers error {code}")
        await asyncio.sleep(RETRY_S)


def _check(running: Callable[[], bool], deadline: float, waiting_for: str) -> None:
    if not running():
        raise NotReadyError("the broker process exited")
    if time.monotonic() > deadline:
        raise NotReadyError(f"not ready in time: {waiting_for}")
