"""A load generator for a Kafka broker: many members heartbeating and committing.

The groups form as a standard consumer's would (`broker_setup`: ApiVersions, Metadata and
CreateTopics, FindCoordinator; `group_formation`: JoinGroup, SyncGroup), so the same load runs
against `groupspec serve`, librdkafka's mock cluster or any Kafka-compatible broker. Each member has its
own connection to its group's coordinator and runs a closed loop (one request in flight):
alternately Heartbeat and OffsetCommit until the deadline, rejoining whenever the coordinator
says so. Latencies are measured per request from send to response, once every member has synced.
Formation is bounded by a timeout; a member whose request is still unanswered a grace period
after the measured window is counted as stalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
)

from groupspec.wire.address import Address
from groupspec.wire.request_connection import NoAnswerError, RequestConnection

from .broker_cpu import CpuClock
from .broker_setup import connect, set_up
from .formation_progress import FormationProgress
from .group_formation import GroupMember, SyncOrder
from .load_protocol import (
    COMMIT_VERSION,
    HEARTBEAT_VERSION,
    REBALANCE_ERRORS,
    TOPIC,
    FormationError,
)

# Members that formed heartbeat (unmeasured) at a consumer's pace while the others form (Kafka's
# heartbeat.interval.ms is 3 s); faster, the heartbeats of a thousand waiting members would slow
# the formation of the rest.
WAITING_HEARTBEAT_S = 3.0
# Connections set up at once (librdkafka's mock cluster listens with a backlog of 5, and
# connections beyond its accept queue can stay unaccepted for minutes).
CONNECT_CONCURRENCY = 5
# How long after the window the last requests may take before their members count as stalled.
END_GRACE_S = 5.0


@dataclass
class LoadReport:
    """What a load run measured."""

    groups: int
    members_per_group: int
    duration_s: float
    formation_s: float = 0.0
    requests: int = 0
    heartbeats: int = 0
    commits: int = 0
    rejoins: int = 0
    errors: int = 0
    stalled: int = 0
    broker_cpu_s: float | None = None
    latencies_ms: list[float] = field(default_factory=list, repr=False)

    @property
    def requests_per_s(self) -> float:
        """Completed heartbeats and commits per second of the measured window."""
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def broker_cpu_us_per_request(self) -> float | None:
        """The broker's CPU time per completed request in the window, where it is visible."""
        if self.broker_cpu_s is None or self.requests == 0:
            return None
        return self.broker_cpu_s / self.requests * 1e6

    def percentile_ms(self, fraction: float) -> float:
        """The latency at `fraction` (0..1) of the sorted measurements."""
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]

    def as_dict(self) -> dict[str, Any]:
        """The report's figures as JSON-ready data."""
        return {
            "groups": self.groups,
            "members_per_group": self.members_per_group,
            "duration_s": round(self.duration_s, 3),
            "formation_s": round(self.formation_s, 3),
            "requests": self.requests,
            "heartbeats": self.heartbeats,
            "commits": self.commits,
            "rejoins": self.rejoins,
            "errors": self.errors,
            "stalled": self.stalled,
            "requests_per_s": round(self.requests_per_s, 1),
            "p50_ms": round(self.percentile_ms(0.50), 3),
            "p99_ms": round(self.percentile_ms(0.99), 3),
            "broker_cpu_us_per_request": _rounded(self.broker_cpu_us_per_request),
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


class MeasuredWindow:
    """The measured window: it opens when every member is ready (has joined and synced once,
    or has an epoch)."""

    def __init__(self, members: int, duration_s: float) -> None:
        self._waiting = members
        self._duration_s = duration_s
        self.opened = asyncio.Event()
        self.deadline = float("inf")

    def member_ready(self) -> None:
        """One more member is ready; the last one opens the window."""
        self._waiting -= 1
        if self._waiting == 0:
            self.deadline = time.monotonic() + self._duration_s
            self.opened.set()


class _Member:
    def __init__(
        self,
        identity: GroupMember,
        coordinator: Address,
        report: LoadReport,
        progress: FormationProgress,
    ) -> None:
        self.identity = identity
        self.coordinator = coordinator
        self.report = report
        self.progress = progress
        self.offset = 0

    async def run(self, window: MeasuredWindow, connect_slots: asyncio.Semaphore) -> None:
        async with connect_slots:
            connection, _ = await connect(self.coordinator, self.identity.label, self.progress)
        try:
            await self.identity.join(connection)
            window.member_ready()
            await self._await_window(connection, window)
            heartbeat = True
            while time.monotonic() < window.deadline:
                sent = time.monotonic()
                error = await (
                    self._heartbeat(connection) if heartbeat else self._commit(connection)
                )
                done = time.monotonic()
                if done <= window.deadline:
                    self.report.requests += 1
                    if heartbeat:
                        self.report.heartbeats += 1
                    else:
                        self.report.commits += 1
                    self.report.latencies_ms.append((done - sent) * 1000)
                heartbeat = not heartbeat
                if error in REBALANCE_ERRORS:
                    self.report.rejoins += 1
                    await self.identity.join(connection)
                elif error != 0:
                    self.report.errors += 1
            await self.identity.leave(connection)
        finally:
            connection.close()

    async def _await_window(self, connection: RequestConnection, window: MeasuredWindow) -> None:
        """Heartbeat (unmeasured) at a consumer's pace until every member has formed."""
        while not window.opened.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(window.opened.wait(), WAITING_HEARTBEAT_S)
            if not window.opened.is_set() and await self._heartbeat(connection) != 0:
                await self.identity.join(connection)

    async def _heartbeat(self, connection: RequestConnection) -> int:
        response = await connection.call(
            HeartbeatRequest(
                group_id=self.identity.group,
                generation_id=self.identity.generation,
                member_id=self.identity.member_id,
                group_instance_id=None,
            ),
            HeartbeatResponse,
            HEARTBEAT_VERSION,
        )
        return int(response.error_code)

    async def _commit(self, connection: RequestConnection) -> int:
        self.offset += 1
        partition = OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
            partition_index=self.identity.index % self.identity.partitions,
            committed_offset=self.offset,
            committed_metadata="",
        )
        response = await connection.call(
            OffsetCommitRequest(
                group_id=self.identity.group,
                generation_id_or_member_epoch=self.identity.generation,
                member_id=self.identity.member_id,
                group_instance_id=None,
                topics=[
                    OffsetCommitRequest.OffsetCommitRequestTopic(name=TOPIC, partitions=[partition])
                ],
            ),
            OffsetCommitResponse,
            COMMIT_VERSION,
        )
        errors = [p.error_code for t in response.topics for p in t.partitions]
        return int(next((e for e in errors if e != 0), 0))


async def _form(
    address: Address,
    groups: int,
    members: int,
    report: LoadReport,
    window: MeasuredWindow,
    progress: FormationProgress,
) -> list[asyncio.Task[None]]:
    """Set up, start every member, and return their tasks once every member has synced."""
    names = [f"bench-{g}" for g in range(groups)]
    _, partitions, coordinators = await set_up(address, names, members, progress)
    tasks = []
    connect_slots = asyncio.Semaphore(CONNECT_CONCURRENCY)
    for name in names:
        order = SyncOrder()
        for index in range(members):
            identity = GroupMember(name, index, partitions, order, progress)
            progress.waiting(identity.label, "a connection")
            member = _Member(identity, coordinators[name], report, progress)
            tasks.append(asyncio.create_task(member.run(window, connect_slots)))
    await until_formed(window, tasks)
    return tasks


async def until_formed(window: MeasuredWindow, tasks: list[asyncio.Task[None]]) -> None:
    """Return when the window opens; before that, cancel every member's task and raise the
    first member's failure (or the cancellation)."""
    opened = asyncio.create_task(window.opened.wait())
    pending: set[asyncio.Future[Any]] = {opened, *tasks}
    try:
        while not opened.done():
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                failure = None if task is opened else task.exception()
                if failure is not None:
                    raise failure
    except BaseException:
        await cancel_tasks(tasks)
        raise
    finally:
        opened.cancel()


async def cancel_tasks(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def run_load(
    address: Address,
    groups: int,
    members: int,
    duration_s: float,
    formation_timeout_s: float,
    broker_cpu: CpuClock | None = None,
) -> LoadReport:
    """Form `groups` × `members` within `formation_timeout_s`, then heartbeat and commit for
    `duration_s`; the figures (with the broker's CPU time in the window, if `broker_cpu` reads
    it). FormationError (one line) if a group did not form as on Kafka."""
    report = LoadReport(groups, members, duration_s)
    window = MeasuredWindow(groups * members, duration_s)
    progress = FormationProgress()
    forming = _form(address, groups, members, report, window, progress)
    what = "group formation did not complete"
    await measure(forming, report, window, progress, formation_timeout_s, what, broker_cpu)
    return report


async def measure(
    forming: Coroutine[Any, Any, list[asyncio.Task[None]]],
    report: LoadReport,
    window: MeasuredWindow,
    progress: FormationProgress,
    formation_timeout_s: float,
    not_formed: str,
    broker_cpu: CpuClock | None,
) -> None:
    """Await `forming` (the members' tasks once the window opens) within `formation_timeout_s`,
    then the window; fill in `report`'s formation time, broker CPU time and stalled members.
    FormationError (one line, starting `not_formed` on a timeout) if the members did not form."""
    total = report.groups * report.members_per_group
    started = time.monotonic()
    formed = asyncio.create_task(forming)
    try:
        tasks = await asyncio.wait_for(asyncio.shield(formed), formation_timeout_s)
    except TimeoutError:
        formed.cancel()
        await asyncio.gather(formed, return_exceptions=True)
        raise FormationError(
            f"{not_formed} within {formation_timeout_s:g} s: " + progress.summary(total)
        ) from None
    except NoAnswerError as silent:
        raise FormationError(str(silent)) from None
    report.formation_s = time.monotonic() - started
    cpu_at_start = broker_cpu() if broker_cpu is not None else None
    await asyncio.sleep(max(0.0, window.deadline - time.monotonic()))
    cpu_at_end = broker_cpu() if broker_cpu is not None else None
    if cpu_at_start is not None and cpu_at_end is not None:
        report.broker_cpu_s = cpu_at_end - cpu_at_start
    _, late = await asyncio.wait(tasks, timeout=END_GRACE_S)
    report.stalled = len(late)
    await cancel_tasks(list(late))
    for task in tasks:
        if task in late:
            continue
        failure = task.exception()
        if isinstance(failure, NoAnswerError):
            raise FormationError(str(failure))
        if failure is not None:
            raise failure
