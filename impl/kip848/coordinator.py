"""The optimized consumer-protocol (KIP-848) group coordinator: ConsumerGroupHeartbeat and
ConsumerGroupDescribe in, responses out, member timers on a clock.

`ConsumerGroupCoordinator.handle(ref, request)` serves one request (ConsumerGroupHeartbeat,
ConsumerGroupDescribe, and OffsetCommit, OffsetFetch, ListGroups and DeleteGroups for the
consumer-protocol groups it holds); its response goes to the `respond` callback (or the
`outbox`). With a `records` sink, every change of a group reaches it as records
(impl/kip848/records.py) before the response goes out, and `load` rebuilds the groups from
them after a restart. `advance()` fires the timers whose deadline the clock
has passed, and completes the regular-expression resolutions heartbeats started (each queued due
at once, impl/kip848/regex.py); `fire(event)` fires one armed timer or completes one resolution
under way now, the way a differential harness mirrors the specification's inputs.
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.errors import InvalidConfigError
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
    TopicPartition,
)

from ..clock import Clock, MonotonicClock
from ..errors import TimerNotArmedError, UnknownRequestError
from ..state import Ref
from .classic_members import classic_heartbeat, classic_join, classic_leave, classic_sync
from .config import ConsumerGroupConfig, Topic
from .describe import consumer_group_describe
from .events import (
    ClassicJoinTimeoutExpired,
    ClassicSyncTimeoutExpired,
    ConsumerGroupTimer,
    RebalanceTimeoutExpired,
    RegexResolutionCompleted,
    SessionTimeoutExpired,
)
from .groups import delete_groups, list_groups
from .heartbeat import consumer_group_heartbeat
from .offsets import CommittedOffset, offset_commit, offset_fetch
from .records import ConsumerGroupRecord, RecordSink, RecordWriter, compact, group_records, replay
from .regex import on_regex_resolved
from .runtime import (
    CLASSIC_JOIN,
    CLASSIC_SYNC,
    REBALANCE,
    REGEX,
    SESSION,
    Responder,
    ResponseBody,
    Runtime,
    TargetChoice,
    TimerEntry,
)
from .state import Group, MemberState
from .timers import on_classic_timeout, on_rebalance_timeout, on_session_timeout

REQUEST_HANDLERS: dict[type, Callable[[Runtime, Ref, Any], None]] = {
    ConsumerGroupHeartbeatRequest: consumer_group_heartbeat,
    ConsumerGroupDescribeRequest: consumer_group_describe,
    JoinGroupRequest: classic_join,
    SyncGroupRequest: classic_sync,
    HeartbeatRequest: classic_heartbeat,
    LeaveGroupRequest: classic_leave,
    OffsetCommitRequest: offset_commit,
    OffsetFetchRequest: offset_fetch,
    ListGroupsRequest: list_groups,
    DeleteGroupsRequest: delete_groups,
}
ConsumerGroupRequest = (
    ConsumerGroupHeartbeatRequest
    | ConsumerGroupDescribeRequest
    | OffsetCommitRequest
    | OffsetFetchRequest
    | ListGroupsRequest
    | DeleteGroupsRequest
    | JoinGroupRequest
    | SyncGroupRequest
    | HeartbeatRequest
    | LeaveGroupRequest
)


class Outbox:
    """Collects responses by ref until taken (the default `respond` target)."""

    __slots__ = ("responses",)

    def __init__(self) -> None:
        self.responses: dict[Ref, ResponseBody] = {}

    def take(self) -> dict[Ref, ResponseBody]:
        """Every response collected since the last take, by the ref it answers."""
        taken = dict(self.responses)
        self.responses.clear()
        return taken


def random_member_id() -> str:
    """A member id as Kafka generates one for a v0 join: a random UUID."""
    return str(uuid.uuid4())


class ConsumerGroupCoordinator:
    """One broker's coordinator of consumer-protocol groups.

    `new_member_id` generates the ids of v0 joins (random UUIDs by default) and
    `new_classic_member_id` those of classic members joining without one; `settle_target`,
    when given, may replace each target the assignor computes (a harness steering the impl
    onto another outcome the specification allows).
    """

    __slots__ = ("_clock", "_rt", "_writer", "outbox")

    def __init__(
        self,
        config: ConsumerGroupConfig | None = None,
        *,
        clock: Clock | None = None,
        respond: Responder | None = None,
        new_member_id: Callable[[], str] | None = None,
        settle_target: TargetChoice | None = None,
        records: RecordSink | None = None,
        new_classic_member_id: Callable[[str], str] | None = None,
    ) -> None:
        config = config if config is not None else ConsumerGroupConfig()
        if not isinstance(config, ConsumerGroupConfig):
            raise InvalidConfigError(
                "config must be a groupspec.impl.kip848 ConsumerGroupConfig, "
                f"got {type(config).__name__}"
            )
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self.outbox: Outbox | None = None
        if respond is None:
            outbox = self.outbox = Outbox()
            respond = outbox.responses.__setitem__
        self._rt = Runtime(
            config,
            respond,
            new_member_id or random_member_id,
            self._clock.now_ms(),
            settle_target,
        )
        self._writer = RecordWriter(records) if records is not None else None
        if new_classic_member_id is not None:
            self._rt.new_classic_member_id = new_classic_member_id

    @property
    def config(self) -> ConsumerGroupConfig:
        """The settings in force."""
        return self._rt.config

    def handle(
        self, ref: Ref, request: ConsumerGroupRequest, client: tuple[str, str] = ("", "")
    ) -> None:
        """Serve `request`; its response goes to the `respond` callback (after its records
        reached the `records` sink). `client` is the sender's client id and host, which a
        heartbeat records on its member (ConsumerGroupDescribe shows them)."""
        handler = REQUEST_HANDLERS.get(request.__class__)
        if handler is None:
            raise UnknownRequestError(f"not a request this coordinator serves: {request!r}")
        rt = self._rt
        rt.now = self._clock.now_ms()
        rt.client = client
        writer = self._writer
        if writer is None or isinstance(request, ConsumerGroupDescribeRequest | ListGroupsRequest):
            handler(rt, ref, request)
            return
        # Hold the response until the records are written: a client must never see what a
        # restart could lose.
        held: list[tuple[Ref, Any]] = []
        respond = rt.respond
        rt.respond = lambda answered, body: held.append((answered, body))
        try:
            handler(rt, ref, request)
        finally:
            rt.respond = respond
        if isinstance(request, DeleteGroupsRequest):
            for group_id in request.group_ids:
                writer.write(rt, group_id)
        elif not isinstance(request, OffsetFetchRequest):
            writer.write(rt, request.group_id)
        for answered, body in held:
            respond(answered, body)

    def holds(self, group_id: str) -> bool:
        """Whether `group_id` is a consumer-protocol group of this coordinator."""
        return group_id in self._rt.groups

    def has_members(self, group_id: str) -> bool:
        """Whether `group_id` is a consumer-protocol group of this coordinator with members."""
        group = self._rt.groups.get(group_id)
        return group is not None and bool(group.members)

    def set_topics(self, topics: tuple[Topic, ...]) -> None:
        """Take `topics` as the cluster's metadata. A group with a member subscribed to a topic
        whose partitions changed (created, grown, deleted) gets a new group epoch, so its next
        heartbeat computes a new target (Kafka bumps the epoch when a heartbeat finds the
        subscribed topics' metadata changed). A new topic makes every group's expressions due
        for a new resolution (at a heartbeat, no sooner than 10 s after the last)."""
        rt = self._rt
        old = rt.config
        config = replace(old, topics=topics)
        changed = {
            name
            for name in {t.name for t in old.topics} | {t.name for t in topics}
            if old.topic_named(name) != config.topic_named(name)
        }
        rt.config = config
        if any(old.topic_named(t.name) is None for t in topics):
            rt.topics_version += 1
        if not changed:
            return
        for group in rt.groups.values():
            if any(m.subscribed_topics & changed for m in group.members.values()):
                group.bump_group_epoch(rt.config)
                if self._writer is not None:
                    self._writer.write(rt, group.group_id)

    def load(self, records: list[ConsumerGroupRecord]) -> int:
        """Rebuild the groups and offsets from `records` (every one written before a restart,
        in order), then arm each member's session timeout from now, and its rebalance
        timeout if it is revoking, as Kafka does when it loads a partition. Returns the
        number of groups loaded."""
        rt = self._rt
        rt.now = self._clock.now_ms()
        compacted = compact(records)
        replay(rt, compacted)
        for group_id, keys in compacted.items():
            if self._writer is not None:
                self._writer.remember(group_id, keys)
        for group in rt.groups.values():
            # What was resolved is taken as resolved against the topics there are now.
            group.regex_topics_version = rt.topics_version
            for member_id, member in group.members.items():
                session_ms = (
                    rt.config.session_timeout_ms
                    if member.classic is None
                    else member.classic.session_timeout_ms
                )
                rt.arm_session(group, member_id, rt.now + session_ms)
                if member.state is MemberState.UNREVOKED_PARTITIONS:
                    rt.arm_rebalance(
                        group, member_id, member.member_epoch, rt.now + member.rebalance_timeout_ms
                    )
        return len(rt.groups)

    def adopt_offsets(self, group_id: str, offsets: dict[TopicPartition, CommittedOffset]) -> None:
        """Keep `offsets` as the group's committed offsets (a group taken over from the
        classic protocol keeps its offsets in Kafka, which stores them apart from the group)."""
        rt = self._rt
        rt.now = self._clock.now_ms()
        rt.offsets.setdefault(group_id, {}).update(offsets)
        if self._writer is not None:
            self._writer.write(rt, group_id)

    def take_empty_group(self, group_id: str) -> dict[TopicPartition, CommittedOffset] | None:
        """Delete the group if it is Empty and hand back its committed offsets (a JoinGroup
        turns an Empty consumer group into a classic group, which keeps them); None when the
        group is not Empty."""
        rt = self._rt
        group = rt.groups.get(group_id)
        if group is None or group.members:
            return None
        del rt.groups[group_id]
        offsets = rt.offsets.pop(group_id, {})
        if self._writer is not None:
            self._writer.write(rt, group_id)
        return offsets

    def committed_offsets(self) -> dict[str, dict[TopicPartition, tuple[int, int, str]]]:
        """Every group's committed offsets, by group id and partition: (offset, leader epoch,
        metadata)."""
        return {
            group_id: {
                partition: (value.offset, value.leader_epoch, value.metadata)
                for partition, value in offsets.items()
            }
            for group_id, offsets in sorted(self._rt.offsets.items())
            if offsets
        }

    def records(self, group_id: str) -> dict[Any, Any]:
        """The records that describe the group and its offsets now, by key."""
        rt = self._rt
        return group_records(rt.groups.get(group_id), rt.offsets.get(group_id))

    def advance(self) -> list[ConsumerGroupTimer]:
        """Fire every timer whose deadline is at or before the clock's time, and complete every
        resolution under way, earliest first; returns the events fired, in order."""
        rt = self._rt
        now = rt.now = self._clock.now_ms()
        heap = rt.heap
        fired: list[ConsumerGroupTimer] = []
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)
            event = self._due_event(entry, now)
            if event is not None:
                self._run(event)
                fired.append(event)
                if self._writer is not None:
                    self._writer.write(rt, event.group_id)
        return fired

    def fire(self, event: ConsumerGroupTimer) -> None:
        """Fire the armed timer `event` now, whatever its deadline, or complete the resolution
        under way it names (raises if not armed, or none is under way)."""
        self._rt.now = self._clock.now_ms()
        if not self._is_armed(event):
            raise TimerNotArmedError(f"{event!r} is not an armed timer")
        self._run(event)
        if self._writer is not None:
            self._writer.write(self._rt, event.group_id)

    # -- reading ----------------------------------------------------------------------------

    def group(self, group_id: str) -> Group | None:
        """The group called `group_id`, or None."""
        return self._rt.groups.get(group_id)

    def groups(self) -> Iterator[Group]:
        """Every group, in group-id order."""
        return (group for _, group in sorted(self._rt.groups.items()))

    def armed_timers(self) -> list[tuple[ConsumerGroupTimer, int]]:
        """Every armed timer with its deadline, in group and member-id order, and each
        resolution under way with the time it was queued for (when it started)."""
        found: list[tuple[ConsumerGroupTimer, int]] = []
        for group in self.groups():
            if group.regex_entry is not None:
                found.append((RegexResolutionCompleted(group.group_id), group.regex_entry[0]))
            for member_id, deadline in sorted(group.session_deadlines.items()):
                found.append((SessionTimeoutExpired(group.group_id, member_id), deadline))
            for member_id, (_, deadline) in sorted(group.rebalance_deadlines.items()):
                found.append((RebalanceTimeoutExpired(group.group_id, member_id), deadline))
            for (kind, member_id), deadline in sorted(group.classic_deadlines.items()):
                timer = (
                    ClassicJoinTimeoutExpired if kind == CLASSIC_JOIN else ClassicSyncTimeoutExpired
                )
                found.append((timer(group.group_id, member_id), deadline))
        return found

    def heap_size(self) -> int:
        """Entries in the timer heap, stale ones included (for monitoring)."""
        return len(self._rt.heap)

    # -- timer plumbing ---------------------------------------------------------------------

    def _is_armed(self, event: ConsumerGroupTimer) -> bool:
        if not isinstance(
            event,
            SessionTimeoutExpired
            | RebalanceTimeoutExpired
            | ClassicJoinTimeoutExpired
            | ClassicSyncTimeoutExpired
            | RegexResolutionCompleted,
        ):
            raise UnknownRequestError(f"not a timer event: {event!r}")
        group = self._rt.groups.get(event.group_id)
        if group is None:
            return False
        if isinstance(event, RegexResolutionCompleted):
            return group.regex_resolution is not None
        if isinstance(event, SessionTimeoutExpired):
            return event.member_id in group.session_deadlines
        if isinstance(event, RebalanceTimeoutExpired):
            return event.member_id in group.rebalance_deadlines
        kind = CLASSIC_JOIN if isinstance(event, ClassicJoinTimeoutExpired) else CLASSIC_SYNC
        return (kind, event.member_id) in group.classic_deadlines

    def _run(self, event: ConsumerGroupTimer) -> None:
        rt = self._rt
        group = rt.groups[event.group_id]
        if isinstance(event, RegexResolutionCompleted):
            on_regex_resolved(rt, group)
        elif isinstance(event, SessionTimeoutExpired):
            on_session_timeout(rt, group, event.member_id)
        elif isinstance(event, RebalanceTimeoutExpired):
            on_rebalance_timeout(rt, group, event.member_id)
        else:
            kind = CLASSIC_JOIN if isinstance(event, ClassicJoinTimeoutExpired) else CLASSIC_SYNC
            on_classic_timeout(rt, group, kind, event.member_id)

    def _due_event(self, entry: TimerEntry, now: int) -> ConsumerGroupTimer | None:
        """The event a popped entry stands for, or None if it is stale (re-queued when the
        timer it stood for was moved later)."""
        rt = self._rt
        _, _, kind, group_id, member_id = entry
        group = rt.groups.get(group_id)
        if group is None:
            return None
        if kind == REGEX:
            # Stale when the resolution it queued completed already (fired) or its group was
            # deleted and created again.
            if group.regex_entry is not entry:
                return None
            return RegexResolutionCompleted(group_id)
        if kind == SESSION:
            due = group.session_deadlines.get(member_id)
            if _surfaced(rt, group, group.session_entries, member_id, due, entry, now):
                return SessionTimeoutExpired(group_id, member_id)
            return None
        if kind in (CLASSIC_JOIN, CLASSIC_SYNC):
            key = (kind, member_id)
            deadline = group.classic_deadlines.get(key)
            if not _surfaced(rt, group, group.classic_entries, key, deadline, entry, now):
                return None
            if kind == CLASSIC_JOIN:
                return ClassicJoinTimeoutExpired(group_id, member_id)
            return ClassicSyncTimeoutExpired(group_id, member_id)
        assert kind == REBALANCE
        armed = group.rebalance_deadlines.get(member_id)
        due = None if armed is None else armed[1]
        if _surfaced(rt, group, group.rebalance_entries, member_id, due, entry, now):
            return RebalanceTimeoutExpired(group_id, member_id)
        return None


def _surfaced(
    rt: Runtime,
    group: Group,
    entries: dict[Any, TimerEntry],
    key: Any,
    deadline: int | None,
    entry: TimerEntry,
    now: int,
) -> bool:
    """Whether `entry`, just popped from the heap as `entries[key]`, stands for a timer due now:
    not when a newer entry replaced it or the timer was cancelled; when the timer moved later,
    the entry is queued again at its deadline instead."""
    if entries.get(key) is not entry:
        return False
    del entries[key]
    if deadline is None:
        return False
    if deadline > now:
        entries[key] = rt.push(deadline, entry[2], group, entry[4])
        return False
    return True
