"""The historical bugs of Kafka's coordinator in mixed groups (classic and consumer-protocol
members) that the mixed world can re-introduce: one module per bug, each exporting its
`MixedFault` as `FAULT`. `models/bugs.py` lists the catalog."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..faults.switch import discover, plugin_named
from .switch import NO_MIXED_FAULT, FaultyMixedCoordinator, MixedFault

__all__ = [
    "MIXED_FAULTS",
    "MIXED_FAULT_SWITCHES",
    "NO_MIXED_FAULT",
    "FaultyMixedCoordinator",
    "MixedFault",
    "mixed_fault",
]


MIXED_FAULT_SWITCHES: Mapping[str, MixedFault] = MappingProxyType(
    {fault.name: fault for fault in discover(__name__, __path__, "FAULT", MixedFault)}
)
# The mixed world's `fault` parameter values and their one-line summaries.
MIXED_FAULTS: Mapping[str, str] = MappingProxyType(
    {name: fault.summary for name, fault in MIXED_FAULT_SWITCHES.items()}
)


def mixed_fault(name: str) -> MixedFault:
    """The fault called `name` (the correct protocol for ""); KeyError naming the known ones."""
    return plugin_named(MIXED_FAULT_SWITCHES, name, NO_MIXED_FAULT, "mixed-group fault")
