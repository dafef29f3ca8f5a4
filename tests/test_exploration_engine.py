"""The breadth-first engine: published state counts, worker-count independence, counterexamples."""

from dataclasses import dataclass

import pytest

from groupspec.checker.bfs import Limits, search
from groupspec.checker.counterexample import reconstruct
from groupspec.checker.derived import initial_states, invariant_problems, invariants
from groupspec.checker.fingerprint import check_canonical, fingerprint
from groupspec.checker.model import Invariant, Part, Transition
from groupspec.checker.plain import PlainModel
from groupspec.models.two_phase import RmPart, TwoPhaseModel, TwoPhaseState


@pytest.mark.parametrize(("rms", "states"), [(3, 288), (5, 8_832)])
def test_two_phase_matches_published_counts(rms, states):
    # TLC and Stateright both report these counts for TwoPhase.tla.
    result = search(TwoPhaseModel(rms))
    assert (result.verdict, result.distinct_states) == ("pass", states)


def test_symmetry_reduces_to_orbits():
    # Each orbit of 5 interchangeable RMs is one multiset of per-RM facts.
    full = search(TwoPhaseModel(5))
    reduced = search(TwoPhaseModel(5, symmetry=True))
    assert reduced.verdict == "pass"
    assert reduced.distinct_states == 314
    assert full.distinct_states / reduced.distinct_states > 28


def test_worker_count_does_not_change_results():
    single = search(TwoPhaseModel(5))
    double = search(TwoPhaseModel(5), workers=2)
    assert (double.distinct_states, double.transitions, double.depth) == (
        single.distinct_states,
        single.transitions,
        single.depth,
    )
    assert double.action_counts == single.action_counts


def test_seeded_bug_gives_shortest_replayable_counterexample():
    model = TwoPhaseModel(3, tm_commits_early=True)
    result = search(model)
    assert result.verdict == "fail"
    (found,) = result.problems
    assert found.problem.property_name == "Consistent"
    example = reconstruct(model, found)
    labels = [step.action for step in example.steps]
    # Shortest: one RM prepares, the TM hears it and commits, another RM aborts, the first commits.
    assert len(labels) == 5
    assert labels.count("TMCommit") == 1
    assert invariant_problems(model, invariants(model)[1], example.steps[-1].state)
    again = search(model, workers=2)
    assert [p.path for p in again.problems] == [found.path]


def test_symmetric_counterexample_replays_in_concrete_identities():
    model = TwoPhaseModel(3, symmetry=True, tm_commits_early=True)
    (found,) = search(model).problems
    example = reconstruct(model, found)
    assert len(example.steps) == 5
    assert invariant_problems(model, invariants(model)[1], example.steps[-1].state)


def test_all_violations_mode_keeps_searching():
    result = search(TwoPhaseModel(3, tm_commits_early=True), limits=Limits(all_violations=True))
    assert len(result.problems) > 1
    assert result.complete


def test_state_limit_stops_with_incomplete_verdict():
    result = search(TwoPhaseModel(5), limits=Limits(max_states=1_000))
    assert result.verdict == "incomplete"
    assert result.stopped_by == "max_states"
    assert result.distinct_states == 1_000


@dataclass(frozen=True)
class Counter:
    value: int


@dataclass(frozen=True)
class CountToThree(PlainModel):
    """Counts up to 3 and stops; 3 is a legitimate end only when `three_is_final`."""

    three_is_final: bool

    name = "count"
    properties = (Invariant("Small", "at most 3", lambda s: ["too big"] if s.value > 3 else []),)

    def initial_states(self):
        return (Counter(0),)

    def transitions(self, state):
        if state.value == 3:
            return ()
        return (Transition("inc", "inc", Counter(state.value + 1)),)

    def is_end(self, state):
        return self.three_is_final and state.value == 3


def test_deadlock_is_a_violation_unless_terminal():
    stuck = search(CountToThree(three_is_final=False))
    assert [p.problem.kind for p in stuck.problems] == ["deadlock"]
    assert len(stuck.problems[0].path) == 4
    assert search(CountToThree(three_is_final=True)).verdict == "pass"


def test_fingerprints_are_stable_values():
    state = initial_states(TwoPhaseModel(2))[0]
    assert fingerprint(state) == fingerprint(TwoPhaseState(state.rms))
    # A fixed value: fingerprints must agree across processes, machines and runs.
    assert fingerprint((1, "a")) == 0x44531534DDF0C874
    check_canonical(state)
    with pytest.raises(TypeError, match=r"state\.x is a frozenset"):
        check_canonical(Holder(frozenset({1})))


@dataclass(frozen=True)
class Holder:
    x: object


def _outcome(result):
    problems = [(p.problem, p.path) for p in result.problems]
    return (
        result.distinct_states,
        result.transitions,
        result.depth,
        result.verdict,
        list(result.action_counts.items()),
        list(result.rule_counts.items()),
        problems,
        result.parents,
    )


def test_worker_counts_agree_on_a_group_preset():
    # The multi-process engine ships states as pickles and skips states a worker already sent;
    # none of that may change what is found, counted or which parent a state gets.
    from groupspec.models.preset_models import load_model

    model = load_model("static-2").model
    single = search(model)
    assert single.verdict == "pass"
    assert _outcome(search(model, workers=2)) == _outcome(single)


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize(
    ("overrides", "limits"),
    [
        ({"fault": "KAFKA-2555"}, Limits()),  # stops at the first violation, mid-level
        ({}, Limits(max_states=2_000)),  # stops at a state limit, mid-level
    ],
)
def test_worker_counts_stop_alike_on_a_group_preset(workers, overrides, limits):
    # Worker processes take small chunks of a level, but the search stops only where one
    # process would (after the same batch), so early stops explore the same states.
    from groupspec.models.preset_models import load_model

    model = load_model("eager-2", overrides).model
    single = search(model, limits=limits)
    assert not single.complete
    assert _outcome(search(model, workers=workers, limits=limits)) == _outcome(single)


@pytest.mark.parametrize("workers", [2, 3])
def test_worker_counts_agree_on_every_violation(workers):
    model = TwoPhaseModel(4, tm_commits_early=True)
    limits = Limits(all_violations=True)
    single = search(model, limits=limits)
    assert len(single.problems) > 1
    assert _outcome(search(model, workers=workers, limits=limits)) == _outcome(single)


def test_worker_counts_record_the_same_graph():
    model = TwoPhaseModel(4, symmetry=True)
    graphs = [search(model, workers=w, record_graph=True).graph for w in (1, 2)]
    assert graphs[0] == graphs[1]
    assert graphs[0].edges == search(model).transitions


def test_state_limit_stops_alike_with_workers():
    limits = Limits(max_states=1_000)
    single = search(TwoPhaseModel(5), limits=limits)
    double = search(TwoPhaseModel(5), workers=2, limits=limits)
    assert (double.stopped_by, double.distinct_states, double.transitions) == (
        single.stopped_by,
        single.distinct_states,
        single.transitions,
    )


@dataclass(frozen=True)
class Exploding(PlainModel):
    """Fails when asked for the steps of 2, to check that worker errors reach the caller."""

    name = "exploding"

    def initial_states(self):
        return (Counter(0),)

    def transitions(self, state):
        if state.value == 2:
            raise ValueError("boom at 2")
        return (Transition("inc", "inc", Counter(state.value + 1)),)


@pytest.mark.parametrize("workers", [1, 2])
def test_model_errors_reach_the_caller(workers):
    with pytest.raises(ValueError, match="boom at 2"):
        search(Exploding(), workers=workers)


class _FirstRmNeverCommits(TwoPhaseModel):
    """Two-phase commit with one more invariant, "the first RM never commits", written either
    as a part over the first RM's slot alone (judged once per component that slot receives) or
    as a part over every slot (judged on every state)."""

    def __init__(self, on_the_slot: bool) -> None:
        super().__init__(3)
        object.__setattr__(self, "on_the_slot", on_the_slot)

    @property
    def properties(self):
        def first_rm(rm: RmPart) -> list[str]:
            return ["rm 0 committed"] if rm.state == "committed" else []

        part = (
            Part((1,), first_rm)
            if self.on_the_slot
            else Part((0, 1, 2, 3), lambda tm, rm, *_: first_rm(rm), cached=False)
        )
        extra = Invariant("FirstNeverCommits", "the first RM never commits", parts=(part,))
        return (*super().properties, extra)


def test_a_label_of_one_slot_finds_every_violation_a_whole_state_label_finds():
    # The engine judges a one-slot label once per component, not once per state: every
    # violating state must still be reported, with the same shortest path.
    limits = Limits(all_violations=True)
    on_slot = search(_FirstRmNeverCommits(on_the_slot=True), limits=limits)
    whole = search(_FirstRmNeverCommits(on_the_slot=False), limits=limits)
    assert len(on_slot.problems) > 1
    assert [(p.problem, p.path) for p in on_slot.problems] == [
        (p.problem, p.path) for p in whole.problems
    ]
    assert on_slot.distinct_states == whole.distinct_states
