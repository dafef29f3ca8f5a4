"""The fault switches a group world can apply: one module per historical bug.

Each module of this package defines a `FaultSwitch` subclass (the hooks its bug changes) with
its catalog entry, and exports it as `SWITCH`. Adding a historical bug is adding one module;
the registry below finds it. `models/bugs.py` lists the catalog in the order of the references.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Mapping
from types import MappingProxyType

from .switch import NO_FAULT, Bug, FaultSwitch

__all__ = [
    "FAULTS",
    "FAULT_SWITCHES",
    "NO_FAULT",
    "Bug",
    "FaultSwitch",
    "fault_switch",
    "unknown_fault_message",
]


def _reference_order(switch: FaultSwitch) -> tuple[str, int, str]:
    # KAFKA-2555 before KAFKA-12890 (by number), then KIP-429.
    match = re.fullmatch(r"([A-Z]+)-(\d+)", switch.name)
    return (match.group(1), int(match.group(2)), "") if match else ("~", 0, switch.name)


def _discover() -> tuple[FaultSwitch, ...]:
    switches = []
    for module in pkgutil.iter_modules(__path__):
        if module.name == "switch":
            continue
        switch = importlib.import_module(f"{__name__}.{module.name}").SWITCH
        if not isinstance(switch, FaultSwitch) or not switch.name:
            raise TypeError(f"{__name__}.{module.name}.SWITCH must be a named FaultSwitch")
        switches.append(switch)
    return tuple(sorted(switches, key=_reference_order))


FAULT_SWITCHES: Mapping[str, FaultSwitch] = MappingProxyType(
    {switch.name: switch for switch in _discover()}
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
