"""The serve bench's consumer-protocol (KIP-848) load: many members heartbeating with
ConsumerGroupHeartbeat, leaving and joining again, against any broker that serves it.

The set-up is the classic load's (`broker_setup`: ApiVersions, Metadata and CreateTopics,
FindCoordinator). Each member then has its own connection to its group's coordinator and joins
with member epoch 0 (ConsumerGroupHeartbeat v1 with a member id of its own, v0 with an empty
one the coordinator fills in), subscribed to the bench topic. A member is a closed-loop client
as the impl bench's is (`kip848_impl_bench`): it heartbeats at the epoch of its last response,
reports the partitions it holds whenever they changed, takes any assignment it is sent at once
(revoking and acknowledging in one heartbeat), and joins again at epoch 0 when fenced. The
window opens when every member has an epoch; before that members heartbeat every
FORMING_HEARTBEAT_S so the groups reconcile. In the window every member leaves (epoch -1) and
joins again once every CHURN_EVERY of its requests, staggered by its index, so each group
rebalances continually.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass
from typing import Any

from groupspec.wire.address import Address
from groupspec.wire.codec import build
from groupspec.wire.request_connection import RequestConnection
from groupspec.wire.schemas.messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)

from .broker_cpu import CpuClock
from .broker_setup import connect, set_up
from .formation_progress import FormationProgress
from .load_protocol import (
    FIND_COORDINATOR_VERSION,
    METADATA_VERSION,
    NONE,
    TOPIC,
    UNKNOWN_MEMBER_ID,
    FormationError,
    deviation,
)
from .serve_load import (
    CONNECT_CONCURRENCY,
    LoadReport,
    MeasuredWindow,
    measure,
    until_formed,
)

CONSUMER_GROUP_HEARTBEAT_KEY = 68
HIGHEST_HEARTBEAT_VERSION = 1
FENCED_MEMBER_EPOCH = 110
# The errors after which a consumer joins again with epoch 0 (Kafka's consumer does so).
REJOIN_ERRORS = frozenset({FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID})
REBALANCE_TIMEOUT_MS = 300_000  # Kafka's consumer's max.poll.interval.ms
# Each member leaves and joins again once every CHURN_EVERY of its requests in the window.
CHURN_EVERY = 50
# How often a member heartbeats while the groups form (not measured).
FORMING_HEARTBEAT_S = 0.5
LEAVE_EPOCH = -1
USED_KEYS = {
    "Metadata": (3, METADATA_VERSION),
    "FindCoordinator": (10, FIND_COORDINATOR_VERSION),
}


@dataclass
class ConsumerLoadReport(LoadReport):
    """What a consumer-protocol load run measured: `requests` are heartbeats, joins and
    leaves; `rejoins` the joins after a fencing error."""

    joins: int = 0
    leaves: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The report's figures as JSON-ready data."""
        return {**super().as_dict(), "joins": self.joins, "leaves": self.leaves}


def heartbeat_version(address: Address, served: dict[int, tuple[int, int]]) -> int:
    """The ConsumerGroupHeartbeat version the load uses on a broker serving `served` (the
    highest both know); FormationError if the broker serves none the load knows."""
    low, high = served.get(CONSUMER_GROUP_HEARTBEAT_KEY, (0, -1))
    if low > high or low > HIGHEST_HEARTBEAT_VERSION:
        raise FormationError(
            f"{address} serves no ConsumerGroupHeartbeat v0–v{HIGHEST_HEARTBEAT_VERSION}: "
            "it does not speak the consumer protocol"
        )
    return min(high, HIGHEST_HEARTBEAT_VERSION)


class _Member:
    """One consumer-protocol member on its own connection."""

    def __init__(
        self,
        group: str,
        index: int,
        version: int,
        coordinator: Address,
        report: ConsumerLoadReport,
        progress: FormationProgress,
    ) -> None:
        self.group = group
        self.index = index
        self.label = f"{group}/{index}"
        self.version = version
        self.coordinator = coordinator
        self.report = report
        self.progress = progress
        # v1: the client names itself (KIP-1082); v0: the coordinator does on the first join.
        self.member_id = str(uuid.uuid5(uuid.NAMESPACE_OID, self.label)) if version else ""
        self.epoch = 0
        self.owned: list[dict[str, Any]] = []
        self.report_owned = True

    async def run(self, window: MeasuredWindow, connect_slots: asyncio.Semaphore) -> None:
        async with connect_slots:
            connection, _ = await connect(self.coordinator, self.label, self.progress)
        try:
            await self._join(connection)
            self.progress.done(self.label)
            window.member_ready()
            await self._await_window(connection, window)
            sent_count = self.index * (CHURN_EVERY // 10 or 1)
            while time.monotonic() < window.deadline:
                sent_count += 1
                leaving = sent_count % CHURN_EVERY == 0
                kind = "leaves" if leaving else "joins" if self.epoch == 0 else "heartbeats"
                sent = time.monotonic()
                error = await self._call(connection, LEAVE_EPOCH if leaving else self.epoch)
                done = time.monotonic()
                if done <= window.deadline:
                    self.report.requests += 1
                    setattr(self.report, kind, getattr(self.report, kind) + 1)
                    self.report.latencies_ms.append((done - sent) * 1000)
                if leaving:
                    self._forget()
                elif error in REJOIN_ERRORS:
                    self.report.rejoins += 1
                    self._forget()
                elif error != NONE:
                    self.report.errors += 1
            if self.epoch > 0:
                await self._call(connection, LEAVE_EPOCH)
        finally:
            connection.close()

    def _forget(self) -> None:
        self.epoch, self.owned, self.report_owned = 0, [], True

    async def _join(self, connection: RequestConnection) -> None:
        """Join with epoch 0 until the coordinator gives an epoch (FormationError if it answers
        what Kafka never answers to a join)."""
        while True:
            self.progress.waiting(self.label, f"a ConsumerGroupHeartbeat v{self.version} response")
            error = await self._call(connection, 0)
            if error == NONE and self.epoch > 0:
                return
            if error not in REJOIN_ERRORS | {NONE}:
                raise deviation(
                    f"ConsumerGroupHeartbeat v{self.version} join of {self.label}",
                    error,
                    sorted(REJOIN_ERRORS | {NONE}),
                )
            self._forget()
            await asyncio.sleep(FORMING_HEARTBEAT_S)

    async def _await_window(self, connection: RequestConnection, window: MeasuredWindow) -> None:
        """Heartbeat (unmeasured) every FORMING_HEARTBEAT_S until every member has joined."""
        while not window.opened.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(window.opened.wait(), FORMING_HEARTBEAT_S)
            if not window.opened.is_set() and await self._call(connection, self.epoch) != NONE:
                self._forget()

    def _request(self, epoch: int) -> Any:
        joining = epoch == 0
        body: dict[str, Any] = {
            "group_id": self.group,
            "member_id": self.member_id,
            "member_epoch": epoch,
            "instance_id": None,
            "rack_id": None,
            "rebalance_timeout_ms": REBALANCE_TIMEOUT_MS if joining else -1,
            "subscribed_topic_names": [TOPIC] if joining else None,
            "server_assignor": None,
            "topic_partitions": [] if joining else (self.owned if self.report_owned else None),
        }
        if self.version >= 1:
            body["subscribed_topic_regex"] = None
        return build(ConsumerGroupHeartbeatRequest, body, self.version)

    async def _call(self, connection: RequestConnection, epoch: int) -> int:
        """Send one heartbeat at `epoch` and take its response; its error code."""
        request = self._request(epoch)
        if epoch > 0:
            self.report_owned = False
        response = await connection.call(request, ConsumerGroupHeartbeatResponse, self.version)
        code = int(response.error_code)
        if code != NONE or epoch == LEAVE_EPOCH:
            return code
        self.member_id = response.member_id or self.member_id
        self.epoch = int(response.member_epoch)
        if response.assignment is not None:
            self.owned = [
                {"topic_id": entry.topic_id, "partitions": list(entry.partitions)}
                for entry in response.assignment.topic_partitions
            ]
            self.report_owned = True
        return code


async def _form(
    address: Address,
    groups: int,
    members: int,
    report: ConsumerLoadReport,
    window: MeasuredWindow,
    progress: FormationProgress,
) -> list[asyncio.Task[None]]:
    """Set up, start every member, and return their tasks once every member has an epoch."""
    names = [f"bench-cp-{g}" for g in range(groups)]
    served, _, coordinators = await set_up(address, names, members, progress, USED_KEYS)
    version = heartbeat_version(address, served)
    connect_slots = asyncio.Semaphore(CONNECT_CONCURRENCY)
    tasks = []
    for name in names:
        for index in range(members):
            member = _Member(name, index, version, coordinators[name], report, progress)
            progress.waiting(member.label, "a connection")
            tasks.append(asyncio.create_task(member.run(window, connect_slots)))
    await until_formed(window, tasks)
    return tasks


async def run_consumer_load(
    address: Address,
    groups: int,
    members: int,
    duration_s: float,
    formation_timeout_s: float,
    broker_cpu: CpuClock | None = None,
) -> ConsumerLoadReport:
    """Join `groups` × `members` consumer-protocol members within `formation_timeout_s`, then
    heartbeat, leave and join for `duration_s`; the figures (with the broker's CPU time in the
    window, if `broker_cpu` reads it). FormationError (one line) if a member could not join."""
    report = ConsumerLoadReport(groups, members, duration_s)
    window = MeasuredWindow(groups * members, duration_s)
    progress = FormationProgress()
    forming = _form(address, groups, members, report, window, progress)
    what = "the members did not all join"
    await measure(forming, report, window, progress, formation_timeout_s, what, broker_cpu)
    return report
