"""groupspec.spec — the executable specification of Kafka's classic group coordinator.

Standard library only. Start at `GroupCoordinatorSpec` (coordinator.py); every rule it applies
is named in `rules.RULES`, and every invariant in `invariants.INVARIANTS`.
"""

from .config import CoordinatorConfig
from .coordinator import GroupCoordinatorSpec, Input
from .errors import (
    ErrorCode,
    IllegalStateTransitionError,
    InvalidConfigError,
    MalformedRequestError,
    SpecInputError,
    UnknownApiError,
)
from .events import (
    EventNotEnabledError,
    FinishLoading,
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    StartLoading,
    SyncTimerExpired,
    Unload,
)
from .group_state import GroupState
from .state import CoordinatorState, Group, Member
from .step import Choice, Outcome

__all__ = [
    "Choice",
    "CoordinatorConfig",
    "CoordinatorState",
    "ErrorCode",
    "EventNotEnabledError",
    "FinishLoading",
    "Group",
    "GroupCoordinatorSpec",
    "GroupState",
    "HeartbeatExpired",
    "IllegalStateTransitionError",
    "Input",
    "InvalidConfigError",
    "JoinTimerExpired",
    "MalformedRequestError",
    "Member",
    "OffsetRetentionCheck",
    "Outcome",
    "SpecInputError",
    "StartLoading",
    "SyncTimerExpired",
    "UnknownApiError",
    "Unload",
]
