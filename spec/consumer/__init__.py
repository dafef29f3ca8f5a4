"""The client side of the classic group protocol: Kafka's ConsumerCoordinator as a state machine.

Start at `ConsumerSpec` (machine.py): `initial_state()` and `step(state, event)`. Every
behaviour a step takes is a rule in `rules.CONSUMER_RULES`; invariants are in `invariants.py`.
"""

from .config import ConsumerConfig
from .events import (
    Close,
    CommitRequested,
    ConsumerEvent,
    ConsumerEventNotEnabledError,
    Disconnected,
    HeartbeatDue,
    MetadataChanged,
    Poll,
    PollTimeoutExpired,
    ResponseReceived,
    SessionTimeoutExpired,
    SubscriptionChanged,
)
from .invariants import check_consumer_state, check_consumer_step
from .machine import ConsumerSpec
from .outcome import (
    ApplicationError,
    ConsumerOutcome,
    PartitionsAssigned,
    PartitionsLost,
    PartitionsRevoked,
    Send,
)
from .protocol_selection import select_rebalance_protocol
from .rules import CONSUMER_RULE_IDS, CONSUMER_RULES
from .state import ConsumerPhase, ConsumerState, Generation, MemberState, phase

__all__ = [
    "CONSUMER_RULES",
    "CONSUMER_RULE_IDS",
    "ApplicationError",
    "Close",
    "CommitRequested",
    "ConsumerConfig",
    "ConsumerEvent",
    "ConsumerEventNotEnabledError",
    "ConsumerOutcome",
    "ConsumerPhase",
    "ConsumerSpec",
    "ConsumerState",
    "Disconnected",
    "Generation",
    "HeartbeatDue",
    "MemberState",
    "MetadataChanged",
    "PartitionsAssigned",
    "PartitionsLost",
    "PartitionsRevoked",
    "Poll",
    "PollTimeoutExpired",
    "ResponseReceived",
    "Send",
    "SessionTimeoutExpired",
    "SubscriptionChanged",
    "check_consumer_state",
    "check_consumer_step",
    "phase",
    "select_rebalance_protocol",
]
