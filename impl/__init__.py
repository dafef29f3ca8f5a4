"""The optimized group coordinator: the production counterpart of `groupspec.spec`.

It imports nothing from `groupspec.spec`; conformance tests (conformance/differential.py) hold it to
the spec. Start at `Coordinator` (coordinator.py); docs/impl.md explains the structure.
"""

from .clock import Clock, ManualClock, MonotonicClock
from .config import CoordinatorConfig
from .coordinator import Coordinator, Outbox
from .errors import PartitionStateError, PolicyError, TimerNotArmedError, UnknownRequestError
from .events import (
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    SyncTimerExpired,
    TimerEvent,
)
from .policy import DefaultPolicy, Policy, RandomPolicy, SequentialIdPolicy
from .state import Group, Member

__all__ = [
    "Clock",
    "Coordinator",
    "CoordinatorConfig",
    "DefaultPolicy",
    "Group",
    "HeartbeatExpired",
    "JoinTimerExpired",
    "ManualClock",
    "Member",
    "MonotonicClock",
    "OffsetRetentionCheck",
    "Outbox",
    "PartitionStateError",
    "Policy",
    "PolicyError",
    "RandomPolicy",
    "SequentialIdPolicy",
    "SyncTimerExpired",
    "TimerEvent",
    "TimerNotArmedError",
    "UnknownRequestError",
]
