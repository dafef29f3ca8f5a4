"""Lamport's two-phase commit (TwoPhase.tla from the TLA+ examples), for calibrating the engines.

The specification is the one from Gray and Lamport's "Consensus on Transaction Commit" that TLC
users and Stateright's examples check: resource managers (RMs) that prepare or abort on their
own, a transaction manager (TM) that commits once every RM has prepared or aborts at any time,
and a set of messages that is only ever added to. Published distinct-state counts make it a
yardstick: 288 states with 3 RMs and 8,832 with 5 (TLC and Stateright agree).

RMs are interchangeable, so the representative of a state sorts the per-RM facts; that is an
exact orbit representative, because no fact mentions one RM from another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from groupspec.checker.model import ActionProperty, Invariant, LivenessProperty, Transition

WORKING, PREPARED, COMMITTED, ABORTED = "working", "prepared", "committed", "aborted"
TM_INIT, TM_COMMITTED, TM_ABORTED = "init", "committed", "aborted"


@dataclass(frozen=True, order=True)
class ResourceManager:
    """What is known about one RM: its state, whether it sent Prepared, whether the TM saw it."""

    state: str = WORKING
    sent_prepared: bool = False
    tm_prepared: bool = False


@dataclass(frozen=True)
class TwoPhaseState:
    """The TLA+ variables: rmState, tmState, tmPrepared and msgs, grouped per RM."""

    rms: tuple[ResourceManager, ...]
    tm_state: str = TM_INIT
    commit_sent: bool = False
    abort_sent: bool = False


def _consistent(state: TwoPhaseState) -> list[str]:
    states = {rm.state for rm in state.rms}
    if COMMITTED in states and ABORTED in states:
        return ["one resource manager committed while another aborted"]
    return []


def _type_ok(state: TwoPhaseState) -> list[str]:
    problems = [
        f"rm {index} is in unknown state {rm.state!r}"
        for index, rm in enumerate(state.rms)
        if rm.state not in (WORKING, PREPARED, COMMITTED, ABORTED)
    ]
    if state.tm_state not in (TM_INIT, TM_COMMITTED, TM_ABORTED):
        problems.append(f"tm is in unknown state {state.tm_state!r}")
    return problems


def _all_decided(state: TwoPhaseState) -> bool:
    return all(rm.state in (COMMITTED, ABORTED) for rm in state.rms)


# Message receipt and the TM's decision are fair (each RM's receive on its own); an RM's own
# choice to prepare or abort is not, since the TM's abort settles a working RM anyway.
TWO_PHASE_FAIR_ACTIONS = frozenset(
    {"TMRcvPrepared", "TMCommit", "TMAbort", "RMRcvCommitMsg", "RMRcvAbortMsg"}
)


def _tm_decides_once(before: TwoPhaseState, step: Transition[TwoPhaseState]) -> list[str]:
    if before.tm_state != TM_INIT and step.state.tm_state != before.tm_state:
        return [f"tm changed its decision from {before.tm_state} to {step.state.tm_state}"]
    return []


@dataclass(frozen=True)
class TwoPhaseModel:
    """Two-phase commit with `resource_managers` RMs; `symmetry` reduces interchangeable RMs."""

    resource_managers: int = 3
    symmetry: bool = False
    # A seeded bug for testing the engines: the TM commits once any RM has prepared.
    tm_commits_early: bool = False

    def __post_init__(self) -> None:
        if self.resource_managers < 1:
            raise ValueError(f"resource_managers must be at least 1, got {self.resource_managers}")

    @property
    def name(self) -> str:
        """The model's name in reports."""
        return f"two-phase({self.resource_managers})"

    def initial_states(self) -> Sequence[TwoPhaseState]:
        """Every RM working, the TM in init, no messages."""
        return (TwoPhaseState(tuple(ResourceManager() for _ in range(self.resource_managers))),)

    def transitions(self, state: TwoPhaseState) -> Sequence[Transition[TwoPhaseState]]:
        """TMRcvPrepared, TMCommit, TMAbort and the RM actions, as in TwoPhase.tla's Next."""
        steps: list[Transition[TwoPhaseState]] = []
        prepared = [rm.tm_prepared for rm in state.rms]
        ready = any(prepared) if self.tm_commits_early else all(prepared)
        if state.tm_state == TM_INIT and ready:
            steps.append(
                Transition(
                    "TMCommit",
                    "TMCommit",
                    replace(state, tm_state=TM_COMMITTED, commit_sent=True),
                )
            )
        if state.tm_state == TM_INIT:
            steps.append(
                Transition(
                    "TMAbort", "TMAbort", replace(state, tm_state=TM_ABORTED, abort_sent=True)
                )
            )
        for index, rm in enumerate(state.rms):
            if state.tm_state == TM_INIT and rm.sent_prepared:
                steps.append(
                    self._rm_step(state, index, "TMRcvPrepared", replace(rm, tm_prepared=True))
                )
            if rm.state == WORKING:
                steps.append(
                    self._rm_step(
                        state, index, "RMPrepare", replace(rm, state=PREPARED, sent_prepared=True)
                    )
                )
                steps.append(
                    self._rm_step(state, index, "RMChooseToAbort", replace(rm, state=ABORTED))
                )
            if state.commit_sent:
                steps.append(
                    self._rm_step(state, index, "RMRcvCommitMsg", replace(rm, state=COMMITTED))
                )
            if state.abort_sent:
                steps.append(
                    self._rm_step(state, index, "RMRcvAbortMsg", replace(rm, state=ABORTED))
                )
        return tuple(steps)

    @staticmethod
    def _rm_step(
        state: TwoPhaseState, index: int, action: str, rm: ResourceManager
    ) -> Transition[TwoPhaseState]:
        rms = (*state.rms[:index], rm, *state.rms[index + 1 :])
        return Transition(f"{action}(rm{index + 1})", action, replace(state, rms=rms))

    def representative(self, state: TwoPhaseState) -> TwoPhaseState:
        """With symmetry, the RMs sorted; otherwise the state itself."""
        return replace(state, rms=tuple(sorted(state.rms))) if self.symmetry else state

    def is_terminal(self, state: TwoPhaseState) -> bool:
        """No state of two-phase commit is a legitimate end: receive steps stay enabled."""
        return False

    @property
    def invariants(self) -> Sequence[Invariant[TwoPhaseState]]:
        """TPTypeOK and TCConsistent."""
        return (Invariant("TypeOK", _type_ok), Invariant("Consistent", _consistent))

    @property
    def action_properties(self) -> Sequence[ActionProperty[TwoPhaseState]]:
        """The TM decides at most once."""
        return (ActionProperty("TMDecidesOnce", _tm_decides_once),)

    @property
    def liveness_properties(self) -> Sequence[LivenessProperty[TwoPhaseState]]:
        """Termination: under weak fairness every RM ends committed or aborted."""
        return (LivenessProperty("AllDecided", _all_decided, fair_actions=TWO_PHASE_FAIR_ACTIONS),)
