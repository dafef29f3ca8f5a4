"""The five classic group states and the legal-transition table (reference §1)."""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType


class GroupState(Enum):
    """A classic group's state; the value is the name Kafka reports in Describe/ListGroups."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


EMPTY = GroupState.EMPTY
PREPARING_REBALANCE = GroupState.PREPARING_REBALANCE
COMPLETING_REBALANCE = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
DEAD = GroupState.DEAD

# Target state -> the states it may be entered from (ClassicGroupState's validPreviousStates).
LEGAL_PREVIOUS_STATES: MappingProxyType[GroupState, frozenset[GroupState]] = MappingProxyType(
    {
        EMPTY: frozenset({PREPARING_REBALANCE}),
        PREPARING_REBALANCE: frozenset({STABLE, COMPLETING_REBALANCE, EMPTY}),
        COMPLETING_REBALANCE: frozenset({PREPARING_REBALANCE}),
        STABLE: frozenset({COMPLETING_REBALANCE}),
        DEAD: frozenset({STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD}),
    }
)

# canRebalance: the states from which a rebalance may be prepared.
CAN_REBALANCE_STATES: frozenset[GroupState] = frozenset({STABLE, COMPLETING_REBALANCE, EMPTY})


def is_legal_transition(source: GroupState, target: GroupState) -> bool:
    """Whether reference §1 allows a group to move from `source` to `target`."""
    return source in LEGAL_PREVIOUS_STATES[target]
