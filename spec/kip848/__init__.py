"""groupspec.spec.kip848 — the coordinator of KIP-848's consumer group protocol (Kafka 4.x) as a
relation: ConsumerGroupHeartbeat, ConsumerGroupDescribe and the member timers, with their rules
(`rules.KIP848_RULES`) and invariants (`invariants.KIP848_INVARIANTS`). docs/kip-848.md explains
it; docs/protocol.md §12 is the reference with Kafka's sources.
"""

from .config import ConsumerGroupConfig, TopicMetadata
from .coordinator import ConsumerGroupCoordinatorSpec
from .events import RebalanceTimeoutExpired, RequestArrived, SessionTimeoutExpired
from .state import ConsumerGroup, ConsumerGroupMember, ConsumerGroupsState, MemberState
from .step import Outcome

__all__ = [
    "ConsumerGroup",
    "ConsumerGroupConfig",
    "ConsumerGroupCoordinatorSpec",
    "ConsumerGroupMember",
    "ConsumerGroupsState",
    "MemberState",
    "Outcome",
    "RebalanceTimeoutExpired",
    "RequestArrived",
    "SessionTimeoutExpired",
    "TopicMetadata",
]
