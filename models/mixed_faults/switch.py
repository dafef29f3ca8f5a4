"""What a mixed-group fault is: a historical bug of Kafka's coordinator in groups with classic
and consumer-protocol members, re-introduced into the mixed world (models/mixed_world.py)
without changing the specification. A fault rewrites the correct mixed coordinator's outcomes
(`coordinator_outcome`), as the KIP-848 world's faults (models/kip848_faults/switch.py) rewrite
the consumer-protocol coordinator's; its catalog entry (`Bug`, shared with the other catalogs)
says which property must fail, under which preset and bounds.
"""

from __future__ import annotations

from groupspec.spec.kip848.mixed import MixedCoordinatorSpec, MixedInput, MixedOutcome
from groupspec.spec.kip848.mixed_state import MixedState

from ..faults.switch import Bug

__all__ = ["NO_MIXED_FAULT", "Bug", "FaultyMixedCoordinator", "MixedFault"]


class MixedFault:
    """The hook the mixed world's coordinator calls; the default is the correct behaviour."""

    # The `--set fault=NAME` value, a one-line summary, and the catalog entry.
    name: str = ""
    summary: str = "no fault: the correct protocol"
    bug: Bug | None = None

    def coordinator_outcome(
        self, before: MixedState, event: MixedInput, outcome: MixedOutcome
    ) -> MixedOutcome:
        """The outcome of `event` in `before` as the buggy coordinator had it."""
        del before, event
        return outcome


NO_MIXED_FAULT = MixedFault()


class FaultyMixedCoordinator(MixedCoordinatorSpec):
    """The specified mixed coordinator as `fault` changes it."""

    def __init__(self, coordinator: MixedCoordinatorSpec, fault: MixedFault) -> None:
        super().__init__(coordinator.config, coordinator.classic.config)
        self.correct = coordinator
        self.fault = fault

    def step(self, state: MixedState, event: MixedInput, now_ms: int) -> tuple[MixedOutcome, ...]:
        """Every outcome of the buggy coordinator (duplicates merged)."""
        outcomes = self.correct.step(state, event, now_ms)
        rewritten = (self.fault.coordinator_outcome(state, event, o) for o in outcomes)
        return tuple(dict.fromkeys(rewritten))
