"""groupspec.spec — the executable specification of Kafka's classic group coordinator.

Standard library and the Kafka vocabulary (groupspec.vocabulary) only. Start at `GroupCoordinatorSpec` (coordinator.py); every rule it applies
is named in `rules.RULES`, and every invariant in `invariants.INVARIANTS`.
"""

from .config import CoordinatorConfig
from .coordinator import GroupCoordinatorSpec, Input
from .errors import UnknownApiError
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
from .state import CoordinatorState, Group, Member
from .step import Choice, Outcome

__all__ = [
    "Choice",
    "CoordinatorConfig",
    "CoordinatorState",
    "EventNotEnabledError",
    "FinishLoading",
    "Group",
    "GroupCoordinatorSpec",
    "HeartbeatExpired",
    "Input",
    "JoinTimerExpired",
    "Member",
    "OffsetRetentionCheck",
    "Outcome",
    "StartLoading",
    "SyncTimerExpired",
    "UnknownApiError",
    "Unload",
]
