"""The optimized consumer-protocol (KIP-848) group coordinator: ConsumerGroupHeartbeat and
ConsumerGroupDescribe in, responses out, member timers on a clock.

`ConsumerGroupCoordinator.handle(ref, request)` serves one request; its response goes to the
`respond` callback (or the `outbox`). `advance()` fires the timers whose deadline the clock
has passed; `fire(event)` fires one armed timer now, the way a differential harness mirrors the
specification's timers.
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.errors import InvalidConfigError

from ..clock import Clock, MonotonicClock
from ..errors import TimerNotArmedError, UnknownRequestError
from ..state import Ref
from .config import ConsumerGroupConfig
from .describe import consumer_group_describe
from .events import ConsumerGroupTimer, RebalanceTimeoutExpired, SessionTimeoutExpired
from .heartbeat import consumer_group_heartbeat
from .runtime import (
    REBALANCE,
    SESSION,
    Responder,
    ResponseBody,
    Runtime,
    TargetChoice,
    TimerEntry,
)
from .state import Group
from .timers import on_rebalance_timeout, on_session_timeout

REQUEST_HANDLERS: dict[type, Callable[[Runtime, Ref, Any], None]] = {
    ConsumerGroupHeartbeatRequest: consumer_group_heartbeat,
    ConsumerGroupDescribeRequest: consumer_group_describe,
}


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

    `new_member_id` generates the ids of v0 joins (random UUIDs by default); `settle_target`,
    when given, may replace each target the assignor computes (a harness steering the impl
    onto another outcome the specification allows).
    """

    __slots__ = ("_clock", "_rt", "outbox")

    def __init__(
        self,
        config: ConsumerGroupConfig | None = None,
        *,
        clock: Clock | None = None,
        respond: Responder | None = None,
        new_member_id: Callable[[], str] | None = None,
        settle_target: TargetChoice | None = None,
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

    @property
    def config(self) -> ConsumerGroupConfig:
        """The settings in force."""
        return self._rt.config

    def handle(
        self, ref: Ref, request: ConsumerGroupHeartbeatRequest | ConsumerGroupDescribeRequest
    ) -> None:
        """Serve `request`; its response goes to the `respond` callback."""
        handler = REQUEST_HANDLERS.get(request.__class__)
        if handler is None:
            raise UnknownRequestError(f"not a request this coordinator serves: {request!r}")
        rt = self._rt
        rt.now = self._clock.now_ms()
        handler(rt, ref, request)

    def advance(self) -> list[ConsumerGroupTimer]:
        """Fire every timer whose deadline is at or before the clock's time, earliest first;
        returns the events fired, in order."""
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
        return fired

    def fire(self, event: ConsumerGroupTimer) -> None:
        """Fire the armed timer `event` now, whatever its deadline (raises if not armed)."""
        self._rt.now = self._clock.now_ms()
        if not self._is_armed(event):
            raise TimerNotArmedError(f"{event!r} is not an armed timer")
        self._run(event)

    # -- reading ----------------------------------------------------------------------------

    def group(self, group_id: str) -> Group | None:
        """The group called `group_id`, or None."""
        return self._rt.groups.get(group_id)

    def groups(self) -> Iterator[Group]:
        """Every group, in group-id order."""
        return (group for _, group in sorted(self._rt.groups.items()))

    def armed_timers(self) -> list[tuple[ConsumerGroupTimer, int]]:
        """Every armed timer with its deadline, in group and member-id order."""
        found: list[tuple[ConsumerGroupTimer, int]] = []
        for group in self.groups():
            for member_id, deadline in sorted(group.session_deadlines.items()):
                found.append((SessionTimeoutExpired(group.group_id, member_id), deadline))
            for member_id, (_, deadline) in sorted(group.rebalance_deadlines.items()):
                found.append((RebalanceTimeoutExpired(group.group_id, member_id), deadline))
        return found

    def heap_size(self) -> int:
        """Entries in the timer heap, stale ones included (for monitoring)."""
        return len(self._rt.heap)

    # -- timer plumbing ---------------------------------------------------------------------

    def _is_armed(self, event: ConsumerGroupTimer) -> bool:
        if not isinstance(event, SessionTimeoutExpired | RebalanceTimeoutExpired):
            raise UnknownRequestError(f"not a timer event: {event!r}")
        group = self._rt.groups.get(event.group_id)
        if group is None:
            return False
        if isinstance(event, SessionTimeoutExpired):
            return event.member_id in group.session_deadlines
        return event.member_id in group.rebalance_deadlines

    def _run(self, event: ConsumerGroupTimer) -> None:
        rt = self._rt
        group = rt.groups[event.group_id]
        if isinstance(event, SessionTimeoutExpired):
            on_session_timeout(rt, group, event.member_id)
        else:
            on_rebalance_timeout(rt, group, event.member_id)

    def _due_event(self, entry: TimerEntry, now: int) -> ConsumerGroupTimer | None:
        """The event a popped entry stands for, or None if it is stale (re-queued when the
        timer it stood for was moved later)."""
        rt = self._rt
        _, _, kind, group_id, member_id = entry
        group = rt.groups.get(group_id)
        if group is None:
            return None
        if kind == SESSION:
            if group.session_entries.get(member_id) is not entry:
                return None
            del group.session_entries[member_id]
            due = group.session_deadlines.get(member_id)
            if due is None:
                return None
            if due > now:
                group.session_entries[member_id] = rt.push(due, SESSION, group, member_id)
                return None
            return SessionTimeoutExpired(group_id, member_id)
        assert kind == REBALANCE
        if group.rebalance_entries.get(member_id) is not entry:
            return None
        del group.rebalance_entries[member_id]
        armed = group.rebalance_deadlines.get(member_id)
        if armed is None:
            return None
        if armed[1] > now:
            group.rebalance_entries[member_id] = rt.push(armed[1], REBALANCE, group, member_id)
            return None
        return RebalanceTimeoutExpired(group_id, member_id)
