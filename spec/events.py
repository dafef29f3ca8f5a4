"""Internal events: timer expiries and changes of offsets-partition ownership (reference §3, §6).

Timers are state (deadlines in milliseconds). Which timers may fire is the driver's business:
the model checker lets any armed timer fire at any step (abstract time, DESIGN decision 2), the
oracle and the implementation fire a timer once the clock passes its deadline. Firing a timer
that is not armed is refused with `EventNotEnabledError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.errors import InputError


class EventNotEnabledError(InputError):
    """An internal event whose precondition does not hold (e.g. a timer that is not armed)."""


@dataclass(frozen=True)
class HeartbeatExpired:
    """A member's session (or a pending member's join) timer fired."""

    group_id: str
    member_id: str


@dataclass(frozen=True)
class JoinTimerExpired:
    """A group's join timer fired (initial-rebalance delay or rebalance timeout)."""

    group_id: str


@dataclass(frozen=True)
class SyncTimerExpired:
    """A group's pending-sync timer fired."""

    group_id: str


@dataclass(frozen=True)
class OffsetRetentionCheck:
    """The periodic offset-expiration task ran."""


@dataclass(frozen=True)
class StartLoading:
    """This broker became leader of an offsets partition and starts replaying it."""

    partition: int


@dataclass(frozen=True)
class FinishLoading:
    """Replay of an offsets partition finished: its groups are rebuilt from the log."""

    partition: int


@dataclass(frozen=True)
class Unload:
    """This broker lost leadership of an offsets partition (the coordinator moves away)."""

    partition: int


TimerEvent = HeartbeatExpired | JoinTimerExpired | SyncTimerExpired | OffsetRetentionCheck
PartitionEvent = StartLoading | FinishLoading | Unload
EVENT_TYPES: tuple[type, ...] = (
    HeartbeatExpired,
    JoinTimerExpired,
    SyncTimerExpired,
    OffsetRetentionCheck,
    StartLoading,
    FinishLoading,
    Unload,
)
