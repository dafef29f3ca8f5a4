"""groupspec.impl.kip848 — the optimized coordinator of KIP-848's consumer group protocol
(ConsumerGroupHeartbeat v0/v1, ConsumerGroupDescribe, session and rebalance timeouts, static
members, regular-expression subscriptions, the range and uniform assignors). Judged against spec/kip848 by
tests/test_kip848_impl_differential.py and the kip848 presets' conformance vectors; it never
imports the specification. docs/impl.md describes it."""

from .config import ConsumerGroupConfig, Topic
from .coordinator import ConsumerGroupCoordinator
from .events import RebalanceTimeoutExpired, RegexResolutionCompleted, SessionTimeoutExpired
from .state import Group, Member, MemberState

__all__ = [
    "ConsumerGroupConfig",
    "ConsumerGroupCoordinator",
    "Group",
    "Member",
    "MemberState",
    "RebalanceTimeoutExpired",
    "RegexResolutionCompleted",
    "SessionTimeoutExpired",
    "Topic",
]
