"""What a KIP-848 fault is: a historical bug of Kafka's consumer-protocol coordinator re-introduced
into the KIP-848 world (models/kip848_world.py), without changing the specification.

A fault rewrites the correct coordinator's outcomes (`coordinator_outcome`), as the classic
world's switches (models/faults/switch.py) rewrite the classic coordinator's; its catalog entry
(`Bug`, shared with the classic catalog) says which property must fail, under which preset and
bounds, and how long the shortest counterexample is.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.kip848 import ConsumerGroupCoordinatorSpec, ConsumerGroupsState
from groupspec.spec.kip848.config import ConsumerGroupConfig
from groupspec.spec.kip848.events import ConsumerGroupInput
from groupspec.spec.kip848.records import rewritten_with_records
from groupspec.spec.kip848.step import Outcome

from ..faults.switch import Bug

__all__ = ["NO_KIP848_FAULT", "Bug", "FaultyCoordinator", "Kip848Fault"]


class Kip848Fault:
    """The hooks the KIP-848 world's coordinator calls; each default is the correct behaviour.

    Most bugs rewrite one outcome (`coordinator_outcome`); a bug in the coordinator's own
    bookkeeping overrides `initial_state` and `step` to carry what the buggy coordinator
    remembered.
    """

    # The `--set fault=NAME` value, a one-line summary, and the catalog entry.
    name: str = ""
    summary: str = "no fault: the correct protocol"
    bug: Bug | None = None

    def coordinator_outcome(
        self,
        config: ConsumerGroupConfig,
        before: ConsumerGroupsState,
        event: ConsumerGroupInput,
        outcome: Outcome,
    ) -> Outcome:
        """The outcome of `event` in `before` as the buggy coordinator (set up with `config`)
        had it."""
        del config, before, event
        return outcome

    def initial_state(self, correct: ConsumerGroupCoordinatorSpec) -> ConsumerGroupsState:
        """The buggy coordinator's initial state."""
        return correct.initial_state()

    def step(
        self,
        correct: ConsumerGroupCoordinatorSpec,
        state: ConsumerGroupsState,
        event: ConsumerGroupInput,
        now_ms: int,
    ) -> tuple[Outcome, ...]:
        """Every outcome of the buggy coordinator: the correct ones, each rewritten."""
        outcomes = correct.step(state, event, now_ms)
        rewritten = (
            _with_own_records(
                correct.config, o, self.coordinator_outcome(correct.config, state, event, o)
            )
            for o in outcomes
        )
        return tuple(dict.fromkeys(rewritten))


def _with_own_records(config: ConsumerGroupConfig, correct: Outcome, faulty: Outcome) -> Outcome:
    """The faulty outcome whose log holds the records of what the buggy coordinator did (a
    buggy Kafka writes records of its own state), so that only the bug's property sees it."""
    if faulty.state is correct.state:
        return faulty
    state = rewritten_with_records(config, correct.state, faulty.state)
    return replace(faulty, state=state)


NO_KIP848_FAULT = Kip848Fault()


class FaultyCoordinator(ConsumerGroupCoordinatorSpec):
    """The specified coordinator as `fault` changes it."""

    def __init__(self, coordinator: ConsumerGroupCoordinatorSpec, fault: Kip848Fault) -> None:
        super().__init__(coordinator.config)
        self.correct = coordinator
        self.fault = fault

    def initial_state(self) -> ConsumerGroupsState:
        """The buggy coordinator's initial state."""
        return self.fault.initial_state(self.correct)

    def step(
        self, state: ConsumerGroupsState, event: ConsumerGroupInput, now_ms: int
    ) -> tuple[Outcome, ...]:
        """Every outcome of the buggy coordinator (duplicates merged)."""
        return self.fault.step(self.correct, state, event, now_ms)
