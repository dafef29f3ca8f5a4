"""A load generator for the wire server: many members heartbeating and committing on loopback.

Each member has its own connection and runs a closed loop (one request in flight): join (with
the MEMBER_ID_REQUIRED round trip), sync (the leader sends empty assignments), then alternately
Heartbeat and OffsetCommit until the deadline, rejoining whenever the coordinator says so.
Latencies are measured per request from send to response, after every member has synced once.
"""

from __future__ import annotations

import asyncio
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)

JOIN_VERSION = 5
SYNC_VERSION = 3
HEARTBEAT_VERSION = 3
COMMIT_VERSION = 7
MEMBER_ID_REQUIRED = 79
REBALANCE_ERRORS = frozenset({22, 25, 27})  # illegal generation, unknown member, rebalancing


@dataclass
class LoadReport:
    """What a load run measured."""

    groups: int
    members_per_group: int
    duration_s: float
    requests: int = 0
    heartbeats: int = 0
    commits: int = 0
    rejoins: int = 0
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list, repr=False)

    @property
    def requests_per_s(self) -> float:
        """Completed heartbeats and commits per second of the measured window."""
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0

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
            "requests": self.requests,
            "heartbeats": self.heartbeats,
            "commits": self.commits,
            "rejoins": self.rejoins,
            "errors": self.errors,
            "requests_per_s": round(self.requests_per_s, 1),
            "p50_ms": round(self.percentile_ms(0.50), 3),
            "p99_ms": round(self.percentile_ms(0.99), 3),
        }


class _Connection:
    """One member's connection: send a request, await its response (one at a time)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.correlation_id = 0

    async def call(self, request: Any, response_class: Any, version: int) -> Any:
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id="bench")
        self.writer.write(bytes(request.encode(version=version, header=True, framed=True)))
        (length,) = struct.unpack(">i", await self.reader.readexactly(4))
        frame = await self.reader.readexactly(length)
        return response_class.decode(frame, version=version, header=True)


class _Window:
    """The measured window: it opens when every member has joined and synced once."""

    def __init__(self, members: int, duration_s: float) -> None:
        self._waiting = members
        self._duration_s = duration_s
        self.opened = False
        self.deadline = float("inf")

    def member_ready(self) -> None:
        """One more member has synced; the last one opens the window."""
        self._waiting -= 1
        if self._waiting == 0:
            self.deadline = time.monotonic() + self._duration_s
            self.opened = True


class _Member:
    def __init__(self, host: str, port: int, group: str, index: int, report: LoadReport) -> None:
        self.host, self.port, self.group, self.index = host, port, group, index
        self.report = report
        self.member_id = ""
        self.generation = -1
        self.offset = 0

    async def join(self, connection: _Connection) -> None:
        while True:
            protocol = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")
            response = await connection.call(
                JoinGroupRequest(
                    group_id=self.group,
                    session_timeout_ms=30_000,
                    rebalance_timeout_ms=30_000,
                    member_id=self.member_id,
                    group_instance_id=None,
                    protocol_type="consumer",
                    protocols=[protocol],
                ),
                JoinGroupResponse,
                JOIN_VERSION,
            )
            if response.error_code == MEMBER_ID_REQUIRED:
                self.member_id = response.member_id
                continue
            if response.error_code != 0:
                self.report.errors += 1
                self.member_id = "" if response.error_code == 25 else self.member_id
                await asyncio.sleep(0.05)
                continue
            self.member_id = response.member_id
            self.generation = response.generation_id
            assignments = []
            if response.leader == self.member_id:
                assignments = [
                    SyncGroupRequest.SyncGroupRequestAssignment(
                        member_id=m.member_id, assignment=b""
                    )
                    for m in response.members
                ]
            sync = await connection.call(
                SyncGroupRequest(
                    group_id=self.group,
                    generation_id=self.generation,
                    member_id=self.member_id,
                    group_instance_id=None,
                    assignments=assignments,
                ),
                SyncGroupResponse,
                SYNC_VERSION,
            )
            if sync.error_code == 0:
                return
            self.report.errors += 1

    async def run(self, window: _Window) -> None:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        connection = _Connection(reader, writer)
        try:
            await self.join(connection)
            window.member_ready()
            heartbeat = True
            while time.monotonic() < window.deadline:
                if not window.opened:
                    # Others are still joining: heartbeat (unmeasured) so as not to expire.
                    heartbeat = True
                    await asyncio.sleep(0.2)
                sent = time.monotonic()
                if heartbeat:
                    response = await connection.call(
                        HeartbeatRequest(
                            group_id=self.group,
                            generation_id=self.generation,
                            member_id=self.member_id,
                            group_instance_id=None,
                        ),
                        HeartbeatResponse,
                        HEARTBEAT_VERSION,
                    )
                    errors = [response.error_code]
                else:
                    self.offset += 1
                    partition = (
                        OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                            partition_index=self.index,
                            committed_offset=self.offset,
                            committed_metadata="",
                        )
                    )
                    topic = OffsetCommitRequest.OffsetCommitRequestTopic(
                        name="bench", partitions=[partition]
                    )
                    response = await connection.call(
                        OffsetCommitRequest(
                            group_id=self.group,
                            generation_id_or_member_epoch=self.generation,
                            member_id=self.member_id,
                            group_instance_id=None,
                            topics=[topic],
                        ),
                        OffsetCommitResponse,
                        COMMIT_VERSION,
                    )
                    errors = [p.error_code for t in response.topics for p in t.partitions]
                done = time.monotonic()
                if window.opened and done <= window.deadline:
                    self.report.requests += 1
                    if heartbeat:
                        self.report.heartbeats += 1
                    else:
                        self.report.commits += 1
                    self.report.latencies_ms.append((done - sent) * 1000)
                heartbeat = not heartbeat
                error = next((e for e in errors if e != 0), 0)
                if error in REBALANCE_ERRORS:
                    self.report.rejoins += 1
                    await self.join(connection)
                elif error != 0:
                    self.report.errors += 1
        finally:
            writer.close()


async def run_load(
    host: str, port: int, groups: int, members: int, duration_s: float
) -> LoadReport:
    """Form `groups` × `members`, then heartbeat and commit for `duration_s`; the figures."""
    report = LoadReport(groups, members, duration_s)
    everyone = [
        _Member(host, port, f"bench-{g}", m, report) for g in range(groups) for m in range(members)
    ]
    window = _Window(len(everyone), duration_s)
    await asyncio.gather(*(m.run(window) for m in everyone))
    return report
