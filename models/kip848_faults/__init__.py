"""The historical bugs of Kafka's consumer-protocol coordinator that the KIP-848 world can
re-introduce: one module per bug, each exporting its `Kip848Fault` as `FAULT`.

Adding one is adding a module; the registry below finds it. `models/bugs.py` lists the catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..faults.switch import discover, plugin_named
from .switch import NO_KIP848_FAULT, FaultyCoordinator, Kip848Fault

__all__ = [
    "KIP848_FAULTS",
    "KIP848_FAULT_SWITCHES",
    "NO_KIP848_FAULT",
    "FaultyCoordinator",
    "Kip848Fault",
    "kip848_fault",
]


KIP848_FAULT_SWITCHES: Mapping[str, Kip848Fault] = MappingProxyType(
    {fault.name: fault for fault in discover(__name__, __path__, "FAULT", Kip848Fault)}
)
# The KIP-848 world's `fault` parameter values and their one-line summaries.
KIP848_FAULTS: Mapping[str, str] = MappingProxyType(
    {name: fault.summary for name, fault in KIP848_FAULT_SWITCHES.items()}
)


def kip848_fault(name: str) -> Kip848Fault:
    """The fault called `name` (the correct protocol for ""); KeyError naming the known ones."""
    return plugin_named(KIP848_FAULT_SWITCHES, name, NO_KIP848_FAULT, "KIP-848 fault")
