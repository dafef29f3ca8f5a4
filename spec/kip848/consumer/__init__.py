"""groupspec.spec.kip848.consumer — the Java consumer's side of KIP-848's consumer group protocol:
its membership state machine (`machine`) and the rules it fires (`rules`). docs/kip-848.md
explains it; docs/protocol.md §12.14 is the reference with Kafka's sources.
"""

from .machine import (
    LEGAL_PREDECESSORS,
    Callback,
    ClientStep,
    ConsumerState,
    IllegalTransitionError,
    KafkaConsumer,
)
from .rules import KIP848_CONSUMER_RULE_IDS, KIP848_CONSUMER_RULES

__all__ = [
    "KIP848_CONSUMER_RULES",
    "KIP848_CONSUMER_RULE_IDS",
    "LEGAL_PREDECESSORS",
    "Callback",
    "ClientStep",
    "ConsumerState",
    "IllegalTransitionError",
    "KafkaConsumer",
]
