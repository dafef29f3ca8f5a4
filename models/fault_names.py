"""Every fault any world can re-introduce, by name: the classic group world's switches
(models/faults/), the KIP-848 world's (models/kip848_faults/) and the mixed world's
(models/mixed_faults/). Each world's `fault` parameter
accepts only its own; this is what `check --fault` and the bug catalog read."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .faults import FAULTS
from .kip848_faults import KIP848_FAULTS
from .mixed_faults import MIXED_FAULTS

__all__ = ["ALL_FAULTS", "unknown_fault_message"]

ALL_FAULTS: Mapping[str, str] = MappingProxyType({**FAULTS, **KIP848_FAULTS, **MIXED_FAULTS})


def unknown_fault_message(name: str) -> str:
    """The error text for a fault name no world knows."""
    return f"unknown fault {name!r}; known: {', '.join(sorted(ALL_FAULTS))}"
