"""Liveness under weak fairness: the recorded graph, AG EF, fair cycles, lassos and their replay."""

from dataclasses import dataclass, replace

import pytest

from groupspec.checker.bfs import Limits, search
from groupspec.checker.counterexample import reconstruct_lasso
from groupspec.checker.derived import holds, liveness_properties
from groupspec.checker.fingerprint import fingerprint
from groupspec.checker.liveness import FAIR_CYCLE, GOAL_UNREACHABLE, check_liveness
from groupspec.checker.model import Cut, LivenessProperty, Transition
from groupspec.checker.plain import PlainModel
from groupspec.models.two_phase import TwoPhaseModel


@dataclass(frozen=True)
class GraphModel(PlainModel):
    """A model spelled out as its edges (source, action, label, target) over named states."""

    edges: tuple[tuple[str, str, str, str], ...]
    goals: frozenset[str]
    fair: frozenset[str] = frozenset()
    applies_to: frozenset[str] | None = None
    per_label: bool = True
    initial: str = "init"
    cut: frozenset[str] = frozenset()

    name = "graph"

    def initial_states(self):
        return (self.initial,)

    def transitions(self, state):
        steps = [
            Transition(label, action, target)
            for source, action, label, target in self.edges
            if source == state
        ]
        # A bound of the model cuts the runs of the states in `cut`.
        return [*steps, Cut("bound")] if state in self.cut else steps

    def is_end(self, state):
        return True

    @property
    def properties(self):
        applies = (lambda s: True) if self.applies_to is None else self.applies_to.__contains__
        return (
            LivenessProperty(
                "Reach",
                "a goal state is reached",
                self.goals.__contains__,
                applies,
                self.fair,
                self.per_label,
                cut_short_by=frozenset({"bound"}),
            ),
        )


def edge(source, action, target, label=None):
    return (source, action, label or action, target)


def graph_model(*edges, goals, **options):
    return GraphModel(tuple(edges), frozenset(goals), **options)


def fp(state):
    return fingerprint(state)


def check(model, **search_options):
    result = search(model, record_graph=True, **search_options)
    (verdict,) = check_liveness(model, result)
    return result, verdict


def assert_lasso_is_a_run(result, lasso):
    """The stem follows BFS parents; every cycle step is a recorded edge; the cycle closes."""
    graph = result.graph
    index = {state: position for position, state in enumerate(graph.states)}
    assert lasso.stem[0] in {fp for fp, parent in result.parents.items() if parent is None}
    for before, after in zip(lasso.stem, lasso.stem[1:], strict=False):
        assert result.parents[after] == before
    assert lasso.stem[-1] == lasso.cycle[0]
    steps = len(lasso.cycle)
    assert len(lasso.cycle_actions) == len(lasso.cycle_labels) == steps >= 1
    for i in range(steps):
        successor = lasso.cycle[(i + 1) % steps]
        recorded = graph.successors(index[lasso.cycle[i]])
        assert (lasso.cycle_actions[i], lasso.cycle_labels[i], successor) in recorded


# A ladder init -> a -> goal of fair steps, with an unfair idle self-loop on every rung.
LADDER = (
    edge("init", "step", "a"),
    edge("a", "step", "goal"),
    edge("init", "idle", "init"),
    edge("a", "idle", "a"),
    edge("goal", "idle", "goal"),
)


def test_goal_reachable_and_every_avoiding_cycle_unfair_passes():
    result, verdict = check(graph_model(*LADDER, goals={"goal"}, fair={"step"}))
    assert verdict.verdict == "pass"
    assert (verdict.applicable_states, verdict.goal_states, verdict.stuck_states) == (3, 1, 0)
    # The idle loops on init and a are cycles avoiding the goal, but not fair ones.
    assert (verdict.cyclic_components, verdict.fair_components) == (2, 0)
    assert result.graph.edges == result.transitions == 5


def test_without_fairness_stuttering_is_a_lasso():
    result, verdict = check(graph_model(*LADDER, goals={"goal"}))
    assert verdict.verdict == "fail"
    (violation,) = verdict.violations
    assert violation.kind == FAIR_CYCLE
    lasso = violation.lasso
    # The first state found in the fair component gives the shortest stem: the initial state.
    assert lasso.stem == (fp("init"),)
    assert lasso.cycle == (fp("init"),)
    assert lasso.cycle_actions == ("idle",)
    assert_lasso_is_a_run(result, lasso)


def test_fair_cycle_avoiding_goal_gives_a_lasso():
    # init -> x <-> y is a fair cycle: ping and pong each take turns, exit is not fair.
    model = graph_model(
        edge("init", "enter", "x"),
        edge("x", "ping", "y"),
        edge("y", "pong", "x"),
        edge("x", "exit", "goal"),
        goals={"goal"},
        fair={"enter", "ping", "pong"},
    )
    result, verdict = check(model)
    assert verdict.verdict == "fail"
    assert verdict.stuck_states == 0
    (violation,) = verdict.violations
    lasso = violation.lasso
    assert violation.path == lasso.stem == (fp("init"), fp("x"))
    assert lasso.cycle == (fp("x"), fp("y"))
    assert lasso.cycle_actions == ("ping", "pong")
    assert_lasso_is_a_run(result, lasso)
    example = reconstruct_lasso(model, violation)
    assert [step.state for step in example.stem] == ["x"]
    assert [step.state for step in example.cycle] == ["y", "x"]
    assert (example.closes, example.rounds) == (True, 1)


def test_continuously_enabled_fair_exit_makes_the_cycle_unfair():
    model = graph_model(
        edge("init", "enter", "x"),
        edge("x", "ping", "y"),
        edge("y", "pong", "x"),
        edge("x", "exit", "goal"),
        edge("y", "exit", "goal"),
        goals={"goal"},
        fair={"exit"},
    )
    assert check(model)[1].verdict == "pass"


def test_unreachable_goal_is_reported_with_a_path():
    model = graph_model(
        edge("init", "good", "goal"),
        edge("init", "bad", "trap"),
        edge("trap", "bad", "pit"),
        goals={"goal"},
    )
    _, verdict = check(model)
    assert verdict.verdict == "fail"
    assert verdict.stuck_states == 2
    (violation,) = verdict.violations
    assert violation.kind == GOAL_UNREACHABLE
    assert violation.lasso is None
    # The first stuck state in breadth-first order, by its shortest path.
    assert violation.path == (fp("init"), fp("trap"))
    example = reconstruct_lasso(model, violation)
    assert [step.state for step in example.stem] == ["trap"]
    assert example.cycle == ()


def test_a_trap_with_a_loop_fails_both_ways():
    model = graph_model(
        edge("init", "good", "goal"),
        edge("init", "bad", "trap"),
        edge("trap", "spin", "trap"),
        goals={"goal"},
        fair={"spin"},
    )
    _, verdict = check(model)
    assert [v.kind for v in verdict.violations] == [GOAL_UNREACHABLE, FAIR_CYCLE]


def test_action_enabled_only_in_some_cycle_states_need_not_be_taken():
    # exit (fair) is enabled in x only; the cycle x -> y -> x leaves it disabled in y, so
    # weak fairness does not force it.
    model = graph_model(
        edge("init", "enter", "x"),
        edge("x", "move", "y"),
        edge("y", "move", "x"),
        edge("x", "exit", "goal"),
        goals={"goal"},
        fair={"exit"},
    )
    result, verdict = check(model)
    assert verdict.verdict == "fail"
    assert verdict.violations[0].lasso.cycle == (fp("x"), fp("y"))
    assert_lasso_is_a_run(result, verdict.violations[0].lasso)


def test_lasso_detours_to_a_state_that_disables_an_untaken_fair_action():
    # In x and y the fair exit is enabled; z disables it. x <-> y alone would be unfair, so the
    # cycle must pass through z.
    model = graph_model(
        edge("init", "enter", "x"),
        edge("x", "move", "y"),
        edge("y", "move", "x"),
        edge("x", "hide", "z"),
        edge("z", "move", "x"),
        edge("x", "exit", "goal"),
        edge("y", "exit", "goal"),
        goals={"goal"},
        fair={"exit"},
    )
    result, verdict = check(model)
    lasso = verdict.violations[0].lasso
    assert lasso.cycle == (fp("x"), fp("z"))
    assert_lasso_is_a_run(result, lasso)


def test_cycle_takes_every_required_fair_action():
    # Two fair self-loops on x, both continuously enabled: a fair cycle must take both.
    model = graph_model(
        edge("init", "enter", "x"),
        edge("x", "recv", "x", label="recv(1)"),
        edge("x", "recv", "x", label="recv(2)"),
        edge("x", "finish", "goal"),
        goals={"goal"},
        fair={"recv"},
    )
    result, verdict = check(model)
    lasso = verdict.violations[0].lasso
    assert lasso.cycle == (fp("x"), fp("x"))
    assert lasso.cycle_labels == ("recv(1)", "recv(2)")
    assert_lasso_is_a_run(result, lasso)
    example = reconstruct_lasso(model, verdict.violations[0])
    assert [step.label for step in example.cycle] == ["recv(1)", "recv(2)"]


def test_fairness_per_label_or_per_action_kind():
    # recv(1) loops on x while recv(2) would lead to the goal. Each label fair on its own:
    # recv(2) is continuously enabled and never taken, so the loop is unfair. One class per
    # action kind: the loop takes "recv", so it is fair.
    edges = (
        edge("init", "enter", "x"),
        edge("x", "recv", "x", label="recv(1)"),
        edge("x", "recv", "goal", label="recv(2)"),
    )
    assert check(graph_model(*edges, goals={"goal"}, fair={"recv"}))[1].verdict == "pass"
    _, per_kind = check(graph_model(*edges, goals={"goal"}, fair={"recv"}, per_label=False))
    assert per_kind.verdict == "fail"
    assert per_kind.violations[0].lasso.cycle_labels == ("recv(1)",)


# Before the fault is used, states flap fairly between on and off and a broken state is
# reachable; once it is used (the unfair fault step), the goal is always reached.
FAULTY = (
    edge("init", "flip", "off"),
    edge("off", "flip", "init"),
    edge("init", "break", "broken"),
    edge("init", "fault", "recovering"),
    edge("off", "fault", "recovering"),
    edge("recovering", "heal", "goal"),
)


def test_applies_restricts_the_check():
    everywhere = graph_model(*FAULTY, goals={"goal"}, fair={"flip", "heal"})
    _, verdict = check(everywhere)
    assert [v.kind for v in verdict.violations] == [GOAL_UNREACHABLE, FAIR_CYCLE]
    after_faults = replace(everywhere, applies_to=frozenset({"recovering", "goal"}))
    _, verdict = check(after_faults)
    assert verdict.verdict == "pass"
    assert verdict.applicable_states == 2


def test_runs_cut_short_by_a_bound_are_neither_success_nor_failure():
    # From "edge" the only way on leaves the model (a bound cut it): without the cut mark the
    # state is stuck; with it the run simply ends there, and it is counted.
    edges = (
        edge("init", "good", "goal"),
        edge("init", "rebalance", "edge"),
        edge("edge", "spin", "edge"),
    )
    _, verdict = check(graph_model(*edges, goals={"goal"}, fair={"spin"}))
    assert [v.kind for v in verdict.violations] == [GOAL_UNREACHABLE, FAIR_CYCLE]
    _, verdict = check(graph_model(*edges, goals={"goal"}, fair={"spin"}, cut={"edge"}))
    assert verdict.verdict == "pass"
    assert (verdict.cut_states, verdict.stuck_states, verdict.fair_components) == (1, 0, 0)


def test_a_fair_cycle_before_the_bound_is_still_a_violation():
    model = graph_model(
        edge("init", "spin", "loop"),
        edge("loop", "spin", "init"),
        edge("init", "leave", "edge"),
        goals={"goal"},
        fair={"spin"},
        cut={"edge"},
    )
    _, verdict = check(model)
    assert [v.kind for v in verdict.violations] == [FAIR_CYCLE]


def test_graph_records_every_edge_with_its_kind_and_marks():
    model = graph_model(*LADDER, goals={"goal"}, fair={"step"})
    graph = search(model, record_graph=True).graph
    assert graph.property_names == ("Reach",)
    assert list(graph.states) == [fp("init"), fp("a"), fp("goal")]
    assert list(graph.marks) == [0b10, 0b10, 0b11]
    assert graph.successors(0) == [("step", "step", fp("a")), ("idle", "idle", fp("init"))]
    assert graph.edge_kinds == [("step", "step"), ("idle", "idle")]
    assert graph.nbytes() == 3 * 8 + 3 * 8 + 4 * 8 + 5 * 8 + 5 * 2


def test_safety_only_search_records_nothing_and_models_need_no_liveness():
    model = TwoPhaseModel(3)
    result = search(model)
    assert result.graph is None
    with pytest.raises(ValueError, match="record_graph"):
        check_liveness(model, result)

    @dataclass(frozen=True)
    class NoLiveness(PlainModel):
        name = "plain"

        def initial_states(self):
            return (0,)

        def transitions(self, state):
            return (Transition("inc", "inc", min(state + 1, 2)),)

    plain = NoLiveness()
    recorded = search(plain, record_graph=True)
    assert recorded.graph.edges == 3
    assert check_liveness(plain, recorded) == ()


def test_graph_is_identical_for_any_worker_count():
    model = TwoPhaseModel(5)
    single = search(model, record_graph=True)
    double = search(model, record_graph=True, workers=2)
    a, b = single.graph, double.graph
    assert a.edges == single.transitions > 256  # several batches
    for name in ("states", "marks", "offsets", "targets", "kinds", "edge_kinds"):
        assert getattr(a, name) == getattr(b, name), name
    assert _without_times(check_liveness(model, single)) == _without_times(
        check_liveness(model, double)
    )


def _without_times(results):
    return tuple(replace(r, elapsed_s=0.0) for r in results)


@dataclass(frozen=True)
class UnfairTwoPhase(TwoPhaseModel):
    """Two-phase commit with the same goal and no fairness at all."""

    @property
    def properties(self):
        *safety, termination = super().properties
        return (*safety, replace(termination, fair_actions=frozenset()))


@pytest.mark.parametrize("symmetry", [False, True])
def test_two_phase_terminates_under_fairness(symmetry):
    model = TwoPhaseModel(3, symmetry=symmetry)
    _, verdict = check(model)
    assert verdict.verdict == "pass"
    assert verdict.stuck_states == 0
    # Stuttering self-loops are everywhere, and none of them is fair.
    assert verdict.cyclic_components > 0
    assert verdict.fair_components == 0


@pytest.mark.parametrize("symmetry", [False, True])
def test_two_phase_without_fairness_stutters_forever(symmetry):
    model = UnfairTwoPhase(3, symmetry=symmetry)
    result, verdict = check(model)
    assert verdict.verdict == "fail"
    (violation,) = verdict.violations
    lasso = violation.lasso
    assert_lasso_is_a_run(result, lasso)
    # The shortest stem: the TM aborts, an RM hears it; then it hears it again and again.
    assert len(lasso.stem) == 3
    assert len(lasso.cycle) == 1
    example = reconstruct_lasso(model, violation)
    assert [step.action for step in example.stem] == ["TMAbort", "RMChooseToAbort"]
    assert example.closes
    (loop,) = example.cycle
    assert loop.state == example.stem[-1].state
    assert not holds(model, liveness_properties(model)[0].goal, loop.state)


def test_two_phase_with_kind_level_fairness_fails():
    # WF(RMRcvCommitMsg) as one class is met by one RM hearing the commit over and over.
    @dataclass(frozen=True)
    class KindFair(TwoPhaseModel):
        @property
        def properties(self):
            *safety, termination = super().properties
            return (*safety, replace(termination, fair_per_label=False))

    _, verdict = check(KindFair(3))
    assert verdict.verdict == "fail"
    assert verdict.violations[0].lasso.cycle_actions[0] in {"RMRcvCommitMsg", "RMRcvAbortMsg"}


def test_early_stop_is_inconclusive_unless_a_fair_cycle_is_already_there():
    _, verdict = check(TwoPhaseModel(5), limits=Limits(max_states=1_000))
    assert verdict.verdict == "inconclusive"
    assert "max_states" in verdict.reason
    assert verdict.violations == ()
    result, verdict = check(UnfairTwoPhase(5), limits=Limits(max_states=1_000))
    assert not result.complete
    assert verdict.verdict == "fail"
    assert [v.kind for v in verdict.violations] == [FAIR_CYCLE]
    # A safety violation stops the search too.
    _, verdict = check(TwoPhaseModel(3, tm_commits_early=True))
    assert verdict.verdict == "inconclusive"
    assert "safety violation" in verdict.reason


@dataclass(frozen=True)
class Swapper(PlainModel):
    """Two interchangeable tokens that swap places forever; symmetry merges both orders."""

    name = "swapper"
    properties = (LivenessProperty("Never", "never", lambda s: False),)

    def initial_states(self):
        return ((0, 1),)

    def transitions(self, state):
        return (Transition("swap", "swap", (state[1], state[0])),)

    def representative(self, state):
        return tuple(sorted(state))


def test_symmetric_cycle_is_replayed_until_it_closes_concretely():
    model = Swapper()
    result, verdict = check(model)
    assert result.distinct_states == 1
    stuck, cycle = verdict.violations
    assert (stuck.kind, cycle.kind) == (GOAL_UNREACHABLE, FAIR_CYCLE)
    assert cycle.lasso.cycle == (fp((0, 1)),)
    example = reconstruct_lasso(model, cycle)
    # One pass over the recorded self-loop ends in (1, 0); a second pass closes the cycle.
    assert (example.closes, example.rounds) == (True, 2)
    assert [step.state for step in example.cycle] == [(1, 0), (0, 1)]
    assert example.initial == (0, 1)
