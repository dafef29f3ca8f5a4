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

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple, cast

from groupspec.checker.fingerprint import fingerprint
from groupspec.checker.model import (
    ActionProperty,
    GroupStep,
    Invariant,
    LivenessProperty,
    Part,
    Property,
    TransitionGroup,
)

from .parameters import check_ranges, documented

WORKING, PREPARED, COMMITTED, ABORTED = "working", "prepared", "committed", "aborted"
# A state of N RMs has about 2N successors, each judged on N components: at 1,000 RMs one state
# takes seconds to expand, far past what an exhaustive check of any depth finishes.
MAX_RESOURCE_MANAGERS = 1_000
TM_INIT, TM_COMMITTED, TM_ABORTED = "init", "committed", "aborted"


# Fingerprints digest reprs, and the repr dataclasses generate goes through a recursion guard
# that costs more than the rest of a step; these classes print the same text by hand.
@dataclass(frozen=True, order=True, repr=False)
class ResourceManager:
    """What is known about one RM: its state, whether it sent Prepared, whether the TM saw it."""

    state: str = WORKING
    sent_prepared: bool = False
    tm_prepared: bool = False

    def __repr__(self) -> str:
        return (
            f"ResourceManager(state={self.state!r}, sent_prepared={self.sent_prepared!r}, "
            f"tm_prepared={self.tm_prepared!r})"
        )


@dataclass(frozen=True, repr=False, init=False)
class TwoPhaseState:
    """The TLA+ variables: rmState, tmState, tmPrepared and msgs, grouped per RM."""

    rms: tuple[ResourceManager, ...]
    tm_state: str = TM_INIT
    commit_sent: bool = False
    abort_sent: bool = False

    def __init__(
        self,
        rms: tuple[ResourceManager, ...],
        tm_state: str = TM_INIT,
        commit_sent: bool = False,
        abort_sent: bool = False,
    ) -> None:
        # Every transition builds one; filling the dict directly is cheaper than the generated
        # frozen __init__ (one object.__setattr__ per field).
        fields = self.__dict__
        fields["rms"] = rms
        fields["tm_state"] = tm_state
        fields["commit_sent"] = commit_sent
        fields["abort_sent"] = abort_sent

    def __repr__(self) -> str:
        rms = self.rms
        # Exactly the text of the generated repr (a one-element tuple prints with a comma).
        texts = [rm.__dict__.get(_TEXT) or repr(rm) for rm in rms]
        inner = f"({texts[0]},)" if len(texts) == 1 else f"({', '.join(texts)})"
        return (
            f"TwoPhaseState(rms={inner}, tm_state={self.tm_state!r}, "
            f"commit_sent={self.commit_sent!r}, abort_sent={self.abort_sent!r})"
        )


# Every well-typed RM, built once: steps reuse these objects and their texts.
_RMS = {
    (state, sent, seen): ResourceManager(state, sent, seen)
    for state in (WORKING, PREPARED, COMMITTED, ABORTED)
    for sent in (False, True)
    for seen in (False, True)
}
_RM_RANKS = {rm: rank for rank, rm in enumerate(sorted(_RMS.values()))}
# Their texts and ranks are also kept on the objects (outside the fields, so equality, order and
# hashing are untouched), where reading them costs no hashing of the RM.
_TEXT, _RANK = "_text", "_rank"
for _value, _rank in _RM_RANKS.items():
    object.__setattr__(_value, _TEXT, repr(_value))
    object.__setattr__(_value, _RANK, _rank)


def _first(pair: tuple[int, ResourceManager]) -> int:
    return pair[0]


def _rm(state: str, sent_prepared: bool, tm_prepared: bool) -> ResourceManager:
    rm = _RMS.get((state, sent_prepared, tm_prepared))
    return rm if rm is not None else ResourceManager(state, sent_prepared, tm_prepared)


_DECIDED = (COMMITTED, ABORTED)


def _tm_steps(rms: int, commits_early: bool, tm: TransactionManager) -> list[GroupStep]:
    """TMCommit (once every RM's Prepared has arrived) and TMAbort."""
    if tm.tm_state != TM_INIT:
        return []
    ready = tm.prepared != 0 if commits_early else tm.prepared == (1 << rms) - 1
    decisions = []
    if ready:
        decisions.append(("TMCommit", _tm(TM_COMMITTED, True, tm.abort_sent, tm.prepared)))
    decisions.append(("TMAbort", _tm(TM_ABORTED, tm.commit_sent, True, tm.prepared)))
    return [
        GroupStep(action, action, (after,), findings=_decides_once(tm, after))
        for action, after in decisions
    ]


def _rm_steps(
    slot: int, ignores_abort: bool, tm: TransactionManager, rm: RmPart
) -> list[GroupStep]:
    """RM `slot`'s steps and the TM's receipt of its Prepared, as TwoPhase.tla has them (with
    `ignores_abort`, a prepared RM receives the TM's Abort and stays prepared)."""
    steps = []
    name = f"(rm{slot})"
    if tm.tm_state == TM_INIT and rm.sent_prepared:
        received = _tm(tm.tm_state, tm.commit_sent, tm.abort_sent, tm.prepared | 1 << (slot - 1))
        steps.append(GroupStep("TMRcvPrepared" + name, "TMRcvPrepared", (received, rm)))
    if rm.state == WORKING:
        steps.append(GroupStep("RMPrepare" + name, "RMPrepare", (tm, _PARTS[PREPARED, True])))
        steps.append(
            GroupStep(
                "RMChooseToAbort" + name, "RMChooseToAbort", (tm, _PARTS[ABORTED, rm.sent_prepared])
            )
        )
    if tm.commit_sent:
        steps.append(
            GroupStep(
                "RMRcvCommitMsg" + name, "RMRcvCommitMsg", (tm, _PARTS[COMMITTED, rm.sent_prepared])
            )
        )
    if tm.abort_sent:
        after = rm if ignores_abort and rm.state == PREPARED else _PARTS[ABORTED, rm.sent_prepared]
        steps.append(GroupStep("RMRcvAbortMsg" + name, "RMRcvAbortMsg", (tm, after)))
    return steps


def _tm_type_ok(tm: TransactionManager) -> list[str]:
    if tm.tm_state in _TM_STATES:
        return []
    return [f"tm is in unknown state {tm.tm_state!r}"]


def _rm_type_ok(index: int) -> Callable[[RmPart], list[str]]:
    """TypeOK of the RM at `index` (numbered from 0, as `TypeOK` on the whole state says)."""

    def type_ok(rm: RmPart) -> list[str]:
        if rm.state in (WORKING, PREPARED, COMMITTED, ABORTED):
            return []
        return [f"rm {index} is in unknown state {rm.state!r}"]

    return type_ok


def _consistent(*rms: RmPart) -> list[str]:
    if _COMMITTED_PARTS.isdisjoint(rms) or _ABORTED_PARTS.isdisjoint(rms):
        return []
    return ["one resource manager committed while another aborted"]


def _all_parts_decided(*rms: RmPart) -> bool:
    return all(rm.state in _DECIDED for rm in rms)


# Message receipt and the TM's decision are fair (each RM's receive on its own); an RM's own
# choice to prepare or abort is not, since the TM's abort settles a working RM anyway.
TWO_PHASE_FAIR_ACTIONS = frozenset(
    {"TMRcvPrepared", "TMCommit", "TMAbort", "RMRcvCommitMsg", "RMRcvAbortMsg"}
)


def _decides_once(
    before: TransactionManager, after: TransactionManager
) -> tuple[tuple[str, str], ...]:
    """TMDecidesOnce on a TM step, as a group step's findings."""
    if before.tm_state != TM_INIT and after.tm_state != before.tm_state:
        detail = f"tm changed its decision from {before.tm_state} to {after.tm_state}"
        return (("TMDecidesOnce", detail),)
    return ()


# The components of a state are named tuples: equal by value and hashed by C code (the
# engine and the invariants hash them often; a dataclass's generated __hash__ is Python code).
class TransactionManager(NamedTuple):
    """The TM's component of a state: its decision, the messages it has sent, and (as a
    bit per RM, TLA+'s tmPrepared) whose Prepared it has received."""

    tm_state: str = TM_INIT
    commit_sent: bool = False
    abort_sent: bool = False
    prepared: int = 0


class RmPart(NamedTuple):
    """An RM's component of a state: its state and whether it sent Prepared."""

    state: str = WORKING
    sent_prepared: bool = False


def _tm(state: str, commit_sent: bool, abort_sent: bool, prepared: int) -> TransactionManager:
    return TransactionManager(state, commit_sent, abort_sent, prepared)


_PARTS = {
    (state, sent): RmPart(state, sent)
    for state in (WORKING, PREPARED, COMMITTED, ABORTED)
    for sent in (False, True)
}
_TM_STATES = (TM_INIT, TM_COMMITTED, TM_ABORTED)
_COMMITTED_PARTS = frozenset(part for part in _PARTS.values() if part.state == COMMITTED)
_ABORTED_PARTS = frozenset(part for part in _PARTS.values() if part.state == ABORTED)


@dataclass(frozen=True)
class TwoPhaseModel:
    """Two-phase commit with `resource_managers` RMs; `symmetry` reduces interchangeable RMs.

    As slots (`checker.model`): slot 0 is the TM, slot i the i-th RM. The TM's group
    (TMCommit, TMAbort) reads every slot, since the TM commits only once every RM's Prepared
    has arrived; RM i's group (TMRcvPrepared, RMPrepare, RMChooseToAbort, RMRcvCommitMsg,
    RMRcvAbortMsg) reads the TM and RM i and writes RM i, so the engine remembers its steps by
    those two values and never runs them twice.
    """

    resource_managers: int = documented(
        3, "resource managers (RMs)", minimum=1, maximum=MAX_RESOURCE_MANAGERS
    )
    symmetry: bool = documented(False, "reduce interchangeable RMs")
    # A seeded bug for testing the engines.
    tm_commits_early: bool = documented(
        False, "seeded bug: the TM commits once any RM has prepared"
    )
    # A seeded liveness bug: every state stays consistent, but a prepared RM never decides.
    rm_ignores_abort: bool = documented(
        False, "seeded bug: a prepared RM ignores the TM's Abort (liveness fails, safety holds)"
    )

    def __post_init__(self) -> None:
        check_ranges(self)

    @property
    def name(self) -> str:
        """The model's name in reports."""
        return f"two-phase({self.resource_managers})"

    # -- the Model interface ---------------------------------------------------------------

    @property
    def slot_names(self) -> tuple[str, ...]:
        """The TM, then each RM."""
        return ("tm", *(f"rm{index + 1}" for index in range(self.resource_managers)))

    @property
    def groups(self) -> tuple[TransitionGroup, ...]:
        """The TM's group, then one group per RM (with the TM's receipt of its Prepared)."""
        return (
            TransitionGroup(
                "tm", (0,), (0,), partial(_tm_steps, self.resource_managers, self.tm_commits_early)
            ),
            *(
                TransitionGroup(
                    f"rm{slot}",
                    (0, slot),
                    (0, slot),
                    partial(_rm_steps, slot, self.rm_ignores_abort),
                )
                for slot in range(1, self.resource_managers + 1)
            ),
        )

    @property
    def properties(self) -> tuple[Property, ...]:
        """TypeOK and Consistent (TCConsistent), TMDecidesOnce, and Termination (AllDecided).

        TypeOK is a conjunction over the components (one part a slot, judged once per
        component the slot holds); Consistent and AllDecided read every RM.
        """
        rms = tuple(range(1, self.resource_managers + 1))
        return (
            Invariant(
                "TypeOK",
                "Every RM and the TM are in one of their states.",
                parts=(
                    Part((0,), _tm_type_ok),
                    *(Part((slot,), _rm_type_ok(slot - 1)) for slot in rms),
                ),
            ),
            Invariant(
                "Consistent",
                "No RM commits while another aborts (TCConsistent).",
                parts=(Part(rms, _consistent, cached=False),),
            ),
            ActionProperty("TMDecidesOnce", "The TM never changes its decision (its steps say)."),
            LivenessProperty(
                "AllDecided",
                "Under weak fairness every RM ends committed or aborted.",
                goal=Part(rms, _all_parts_decided, cached=False),
                fair_actions=TWO_PHASE_FAIR_ACTIONS,
            ),
        )

    def initial_components(self) -> tuple[tuple[object, ...], ...]:
        """Every RM working, the TM in init, no messages."""
        return (
            (_tm(TM_INIT, False, False, 0), *(_PARTS[WORKING, False],) * self.resource_managers),
        )

    def state_of(self, components: tuple[object, ...]) -> TwoPhaseState:
        """The state object of a tuple of components."""
        tm = components[0]
        assert isinstance(tm, TransactionManager)
        rms = tuple(
            _rm(part.state, part.sent_prepared, bool(tm.prepared >> index & 1))  # type: ignore[attr-defined]
            for index, part in enumerate(components[1:])
        )
        return TwoPhaseState(rms, tm.tm_state, tm.commit_sent, tm.abort_sent)

    def components_of(self, state: TwoPhaseState) -> tuple[object, ...]:
        """The components of a state object."""
        prepared = sum(1 << index for index, rm in enumerate(state.rms) if rm.tm_prepared)
        return (
            _tm(state.tm_state, state.commit_sent, state.abort_sent, prepared),
            *(_PARTS[rm.state, rm.sent_prepared] for rm in state.rms),
        )

    def apply_update(self, slot: int, value: object, update: Hashable) -> object:
        """Two-phase commit's steps write their slots."""
        raise TypeError("two-phase commit's steps write their slots")

    def after_step(self, components: tuple[object, ...]) -> tuple[object, ...]:
        """Nothing to rename."""
        return components

    renames_after_step = False
    omits_self_loops = False
    # Symmetry sorts whole states (`canonical`): no piecewise canonical form.
    canonical_form = None

    @property
    def reduces(self) -> bool:
        """With symmetry, `canonical` sorts the RMs."""
        return self.symmetry

    def canonical(self, components: tuple[object, ...]) -> tuple[object, ...]:
        """With symmetry, the RMs sorted (see `representative`)."""
        if not self.symmetry:
            return components
        return self.components_of(self.representative(self.state_of(components)))

    def representative(self, state: TwoPhaseState) -> TwoPhaseState:
        """With symmetry, the RMs sorted; otherwise the state itself."""
        if not self.symmetry:
            return state
        rms = state.rms
        ranks: list[int | None] = [rm.__dict__.get(_RANK) for rm in rms]
        if None not in ranks:
            known = cast("list[int]", ranks)  # no rank is None: checked just above
            # The same order as the dataclass comparison, without a Python-level __lt__ per pair.
            ordered = tuple(rm for _, rm in sorted(zip(known, rms, strict=True), key=_first))
        else:
            ordered = tuple(sorted(rms))
        return TwoPhaseState(ordered, state.tm_state, state.commit_sent, state.abort_sent)

    def component_digest(self, value: object) -> int:
        """The fingerprint of a TM or RM component."""
        return fingerprint(value)

    def is_terminal(self, components: tuple[object, ...], cuts: frozenset[str]) -> bool:
        """No state of two-phase commit is a legitimate end: receive steps stay enabled."""
        return False
