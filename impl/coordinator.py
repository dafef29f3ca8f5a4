"""The optimized classic group coordinator: requests in, responses out, timers on a clock.

`Coordinator.handle(ref, request)` serves one request; its response (and any response to
requests parked earlier that it completes) goes to the `respond` callback. `advance()` fires
the timers whose deadline the clock has passed; `fire(event)` fires one named timer now, the
way a conformance harness mirrors the specification's abstract time. Partition ownership
changes arrive through `start_loading`, `finish_loading` and `unload`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

from groupspec.vocabulary.errors import InvalidConfigError
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Request,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import ResponseBody

from .admin import delete_groups, describe_groups, find_coordinator, list_groups
from .clock import Clock, MonotonicClock
from .config import CoordinatorConfig
from .errors import TimerNotArmedError, UnknownRequestError
from .events import (
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    SyncTimerExpired,
    TimerEvent,
)
from .heartbeat import heartbeat
from .join import join_group
from .leave import leave_group
from .loading import on_finish_loading, on_start_loading, on_unload
from .log import OffsetsLog
from .offsets import offset_commit, offset_fetch, run_offset_retention
from .policy import DefaultPolicy, Policy
from .runtime import Ref, Responder, Runtime
from .state import Group, Member
from .sync import sync_group
from .timer_heap import HEARTBEAT, JOIN, PENDING, RETENTION, SYNC, Entry
from .timers import on_heartbeat_expired, on_join_timer_expired, on_sync_timer_expired

# Every request type, and the handler that serves it.
REQUEST_HANDLERS: dict[type, Callable[[Runtime, Ref, Any], None]] = {
    HeartbeatRequest: heartbeat,
    OffsetCommitRequest: offset_commit,
    OffsetFetchRequest: offset_fetch,
    JoinGroupRequest: join_group,
    SyncGroupRequest: sync_group,
    LeaveGroupRequest: leave_group,
    FindCoordinatorRequest: find_coordinator,
    DescribeGroupsRequest: describe_groups,
    ListGroupsRequest: list_groups,
    DeleteGroupsRequest: delete_groups,
}


def requeue_heartbeat(rt: Runtime, group: Group, member: Member, deadline_ms: int) -> None:
    """Heartbeats moved a member's deadline since its entry was queued: queue the new one."""
    member.heartbeat_entry = rt.timers.push(deadline_ms, HEARTBEAT, group, member)


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


class Coordinator:
    """One broker's classic group coordinator, for every offsets partition it leads."""

    __slots__ = ("_clock", "_rt", "outbox")

    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        *,
        policy: Policy | None = None,
        clock: Clock | None = None,
        respond: Responder | None = None,
        unowned_partitions: frozenset[int] = frozenset(),
    ) -> None:
        config = config if config is not None else CoordinatorConfig()
        if not isinstance(config, CoordinatorConfig):
            raise InvalidConfigError(
                f"config must be a groupspec.impl CoordinatorConfig, got {type(config).__name__}"
            )
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        # Without a callback, responses collect in an Outbox; its dict's own __setitem__ is
        # the callback, which keeps the per-response cost a C call.
        self.outbox: Outbox | None = None
        if respond is None:
            self.outbox = Outbox()
            respond = self.outbox.responses.__setitem__
        self._rt = Runtime(
            config,
            policy if policy is not None else DefaultPolicy(),
            respond,
            frozenset(unowned_partitions),
            self._clock.now_ms(),
        )
        for partition in unowned_partitions:
            if not isinstance(partition, int) or not 0 <= partition < self._rt.num_partitions:
                raise InvalidConfigError(
                    f"partition {partition!r} is outside [0, {self._rt.num_partitions})"
                )

    def reconfigure(self, config: CoordinatorConfig) -> None:
        """Serve every later input with `config`, keeping groups, offsets and the log: what a
        broker that takes over an offsets partition with other settings does (a rolling
        restart that lowered group.max.size); a loaded group over the new limit rebalances
        when it is next loaded. The number of offsets partitions cannot change."""
        if not isinstance(config, CoordinatorConfig):
            raise InvalidConfigError(
                f"config must be a groupspec.impl CoordinatorConfig, got {type(config).__name__}"
            )
        if config.offsets_topic_num_partitions != self._rt.num_partitions:
            raise InvalidConfigError("offsets.topic.num.partitions cannot change")
        self._rt.config = config

    # -- inputs -----------------------------------------------------------------------------

    def handle(self, ref: Ref, request: Request) -> None:
        """Serve `request`; responses go to the `respond` callback (now or when unparked)."""
        handler = REQUEST_HANDLERS.get(request.__class__)
        if handler is None:
            raise UnknownRequestError(f"not a request this coordinator serves: {request!r}")
        rt = self._rt
        rt.now = self._clock.now_ms()
        handler(rt, ref, request)

    def advance(self, on_fired: Callable[[TimerEvent], None] | None = None) -> list[TimerEvent]:
        """Fire every timer whose deadline is at or before the clock's time, earliest first.

        Returns the events fired, in order; `on_fired` is called after each. A timer re-armed
        at the current instant by a firing (a zero rebalance timeout) fires on the next call,
        not again in this one, so a call always terminates.
        """
        rt = self._rt
        now = rt.now = self._clock.now_ms()
        heap = rt.timers
        fired: list[TimerEvent] = []
        fired_now: set[TimerEvent] = set()
        deferred: list[Entry] = []
        while (entry := heap.pop_due(now)) is not None:
            event = self._due_event(entry)
            if event is None:
                continue
            if event in fired_now:
                deferred.append(entry)
                continue
            fired_now.add(event)
            self._run(event)
            fired.append(event)
            if on_fired is not None:
                on_fired(event)
        for entry in deferred:
            heap.restore(entry)
        if heap.needs_compaction():
            heap.compact(self._is_live)
        return fired

    def fire(self, event: TimerEvent) -> None:
        """Fire the armed timer `event` now, whatever its deadline (raises if not armed)."""
        rt = self._rt
        rt.now = self._clock.now_ms()
        if not self._is_armed(event):
            raise TimerNotArmedError(f"{event!r} is not an armed timer")
        self._run(event)

    def start_loading(self, partition: int) -> None:
        """This broker became leader of `partition` and starts replaying it."""
        self._rt.now = self._clock.now_ms()
        on_start_loading(self._rt, partition)

    def finish_loading(self, partition: int) -> None:
        """Replay of `partition` finished: its groups are rebuilt from the log."""
        self._rt.now = self._clock.now_ms()
        on_finish_loading(self._rt, partition)

    def unload(self, partition: int) -> None:
        """This broker lost leadership of `partition`: its groups leave memory."""
        self._rt.now = self._clock.now_ms()
        on_unload(self._rt, partition)

    # -- inspection (read-only views; callers must not mutate what they get) -----------------

    @property
    def config(self) -> CoordinatorConfig:
        """The configuration in force."""
        return self._rt.config

    @property
    def log(self) -> OffsetsLog:
        """The offsets log."""
        return self._rt.log

    @property
    def loading_partitions(self) -> frozenset[int]:
        """Partitions being replayed."""
        return frozenset(self._rt.loading)

    @property
    def unowned_partitions(self) -> frozenset[int]:
        """Partitions another broker leads."""
        return frozenset(self._rt.unowned)

    @property
    def retention_deadline_ms(self) -> int:
        """When the next offset retention check is due."""
        return self._rt.retention_deadline_ms

    def group(self, group_id: str) -> Group | None:
        """The group `group_id` held in memory, if any."""
        return self._rt.groups.get(group_id)

    def groups(self) -> Iterator[Group]:
        """Every group held in memory."""
        return iter(self._rt.groups.values())

    def partition_for(self, group_id: str) -> int:
        """The offsets partition that owns `group_id`."""
        return self._rt.partition_of(group_id)

    def armed_timers(self) -> list[tuple[int, TimerEvent]]:
        """Every armed timer as (deadline, event), read from the groups (not the heap)."""
        timers: list[tuple[int, TimerEvent]] = []
        for group in self._rt.groups.values():
            gid = group.group_id
            for member in group.members.values():
                if member.heartbeat_deadline_ms is not None:
                    timers.append(
                        (member.heartbeat_deadline_ms, HeartbeatExpired(gid, member.member_id))
                    )
            for member_id, deadline in group.pending_members.items():
                timers.append((deadline, HeartbeatExpired(gid, member_id)))
            if group.join_timer is not None:
                timers.append((group.join_timer.deadline_ms, JoinTimerExpired(gid)))
            if group.sync_timer is not None:
                timers.append((group.sync_timer.deadline_ms, SyncTimerExpired(gid)))
        timers.append((self._rt.retention_deadline_ms, OffsetRetentionCheck()))
        return timers

    def scheduled_timers(self) -> list[TimerEvent]:
        """Every timer the heap will fire, read from the heap's live entries (`armed_timers`
        reads the deadlines the groups hold; a deadline without an entry never fires)."""
        events: list[TimerEvent] = []
        for entry in self._rt.timers.entries():
            if not self._is_live(entry):
                continue
            _, _, kind, group, target = entry
            if kind == RETENTION:
                events.append(OffsetRetentionCheck())
                continue
            assert isinstance(group, Group)
            gid = group.group_id
            if kind == HEARTBEAT:
                member = cast(Member, target)
                if member.heartbeat_deadline_ms is not None:
                    events.append(HeartbeatExpired(gid, member.member_id))
            elif kind == PENDING:
                events.append(HeartbeatExpired(gid, cast(str, target)))
            elif kind == JOIN:
                events.append(JoinTimerExpired(gid))
            else:
                events.append(SyncTimerExpired(gid))
        return events

    def heap_size(self) -> int:
        """Entries in the timer heap, stale ones included (for monitoring)."""
        return len(self._rt.timers)

    # -- timer plumbing ---------------------------------------------------------------------

    def _is_armed(self, event: TimerEvent) -> bool:
        rt = self._rt
        if isinstance(event, OffsetRetentionCheck):
            return True
        if not isinstance(event, HeartbeatExpired | JoinTimerExpired | SyncTimerExpired):
            raise UnknownRequestError(f"not a timer event: {event!r}")
        group = rt.groups.get(event.group_id)
        if group is None:
            return False
        if isinstance(event, HeartbeatExpired):
            if event.member_id in group.pending_members:
                return True
            member = group.members.get(event.member_id)
            return member is not None and member.heartbeat_deadline_ms is not None
        if isinstance(event, JoinTimerExpired):
            return group.join_timer is not None
        return group.sync_timer is not None

    def _run(self, event: TimerEvent) -> None:
        """Run the handler of an armed timer."""
        rt = self._rt
        if isinstance(event, HeartbeatExpired):
            on_heartbeat_expired(rt, rt.groups[event.group_id], event.member_id)
        elif isinstance(event, JoinTimerExpired):
            on_join_timer_expired(rt, rt.groups[event.group_id])
        elif isinstance(event, SyncTimerExpired):
            on_sync_timer_expired(rt, rt.groups[event.group_id])
        else:
            run_offset_retention(rt)

    def _due_event(self, entry: Entry) -> TimerEvent | None:
        """The event a popped entry stands for, or None if it is stale (re-queued if postponed)."""
        rt = self._rt
        deadline, _, kind, group, target = entry
        if kind == RETENTION:
            return OffsetRetentionCheck() if rt.retention_entry is entry else None
        assert isinstance(group, Group)
        if rt.groups.get(group.group_id) is not group:
            return None
        if kind == HEARTBEAT:
            member = cast(Member, target)
            member_id = member.member_id
            if member.heartbeat_entry is not entry or group.members.get(member_id) is not member:
                return None
            due = member.heartbeat_deadline_ms
            if due is not None and due > deadline:
                requeue_heartbeat(rt, group, member, due)
                return None
            # This entry has left the heap: the next arming must queue a fresh one.
            member.heartbeat_entry = None
            return None if due is None else HeartbeatExpired(group.group_id, member_id)
        if kind == PENDING:
            member_id = cast(str, target)
            if group.pending_members.get(member_id) != deadline:
                return None
            return HeartbeatExpired(group.group_id, member_id)
        if kind == JOIN:
            return JoinTimerExpired(group.group_id) if group.join_timer is target else None
        if kind == SYNC:
            return SyncTimerExpired(group.group_id) if group.sync_timer is target else None
        raise AssertionError(f"unknown timer kind {kind}")

    def _is_live(self, entry: Entry) -> bool:
        """Whether an entry still stands for an armed timer (compaction keeps only these)."""
        rt = self._rt
        _, _, kind, group, target = entry
        if kind == RETENTION:
            return rt.retention_entry is entry
        assert isinstance(group, Group)
        if rt.groups.get(group.group_id) is not group:
            return False
        if kind == HEARTBEAT:
            member = cast(Member, target)
            return member.heartbeat_entry is entry and group.members.get(member.member_id) is member
        if kind == PENDING:
            return group.pending_members.get(cast(str, target)) == entry[0]
        if kind == JOIN:
            return group.join_timer is target
        return group.sync_timer is target
