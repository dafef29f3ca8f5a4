"""Colours and fonts shared by every diagram, so a state looks the same in each picture."""

from __future__ import annotations

from types import MappingProxyType

FONT = "Helvetica"
# Fill colours by state name: group states (§1), pseudo group nodes and consumer phases.
STATE_COLOURS: MappingProxyType[str, str] = MappingProxyType(
    {
        "no group": "#f2f2f2",
        "unloaded": "#f2f2f2",
        "loading": "#f2f2f2",
        "Empty": "#dfe7f1",
        "PreparingRebalance": "#fde2b3",
        "CompletingRebalance": "#fff3b0",
        "Stable": "#cdebc5",
        "Dead": "#f4c7c3",
        "unjoined": "#eeeeee",
        "joining": "#fde2b3",
        "awaiting sync": "#fff3b0",
        "stable": "#cdebc5",
        "rejoin needed": "#e3d4f0",
        "fatal": "#f4c7c3",
        "closed": "#d9d9d9",
        # KIP-848: the consumer group's states, a member's reconciliation, the Java consumer's
        # MemberState (Stable and Empty share the classic colours).
        "Assigning": "#fde2b3",
        "Reconciling": "#fff3b0",
        "UnrevokedPartitions": "#fde2b3",
        "UnreleasedPartitions": "#fff3b0",
        "not a member": "#f2f2f2",
        "no process": "#f2f2f2",
        "Unsubscribed": "#eeeeee",
        "Joining": "#fde2b3",
        "Acknowledging": "#e6f0c0",
        "Fenced": "#e3d4f0",
        "PrepareLeaving": "#dfe7f1",
        "Leaving": "#c9d6e8",
        "Fatal": "#f4c7c3",
        "Stale": "#d9d9d9",
    }
)
DEFAULT_COLOUR = "#ffffff"
FAULT_COLOUR = "#c0392b"
TIMER_COLOUR = "#2c6fbb"
UNREACHED_COLOUR = "#9a9a9a"


def colour_of(state: str) -> str:
    """The fill colour of a state or phase (white for names without one)."""
    return STATE_COLOURS.get(state, DEFAULT_COLOUR)
