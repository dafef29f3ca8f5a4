"""The fault switches a group world can apply: one module per historical bug.

Each module of this package defines a `FaultSwitch` subclass (the hooks its bug changes) with
its catalog entry, and exports it as `SWITCH`. Adding a historical bug is adding one module;
the registry below finds it. `models/bugs.py` lists the catalog in the order of the references.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .switch import NO_FAULT, Bug, FaultSwitch, discover

__all__ = [
    "FAULTS",
    "FAULT_SWITCHES",
    "NO_FAULT",
    "Bug",
    "FaultSwitch",
    "fault_switch",
    "unknown_fault_message",
]


FAULT_SWITCHES: Mapping[str, FaultSwitch] = MappingProxyType(
    {switch.name: switch for switch in discover(__name__, __path__, "SWITCH", FaultSwitch)}
)
# The `fault` parameter's values and their one-line summaries.
FAULTS: Mapping[str, str] = MappingProxyType(
    {name: switch.summary for name, switch in FAULT_SWITCHES.items()}
)


def unknown_fault_message(name: str) -> str:
    """The error text for a fault name that is not in the catalog."""
    return f"unknown fault {name!r}; known: {', '.join(sorted(FAULTS))}"


def fault_switch(name: str) -> FaultSwitch:
    """The switch called `name` (the correct protocol for ""); KeyError naming the known ones."""
    if not name:
        return NO_FAULT
    try:
        return FAULT_SWITCHES[name]
    except KeyError:
        raise KeyError(unknown_fault_message(name)) from None
