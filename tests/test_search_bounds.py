"""`--max-states` and `--max-seconds` stop every engine (issue 29): a state budget at the very
state that fills it, alike for every engine; a time limit inside an expansion, inside the merge's
waits and inside the liveness analysis. Clocks here are counters, never the wall clock."""

from __future__ import annotations

import itertools

import pytest

from groupspec.checker.bfs import Limits, search
from groupspec.checker.budget import STATE_LIMIT, TIME_LIMIT, Halt
from groupspec.checker.check import check
from groupspec.checker.expand import ROOM, Expander
from groupspec.checker.liveness import OUT_OF_TIME, check_liveness
from groupspec.models.preset_models import load_model
from groupspec.models.two_phase import TwoPhaseModel


def _outcome(result):  # type: ignore[no-untyped-def]
    return (
        result.stopped_by,
        result.distinct_states,
        result.transitions,
        dict(result.action_counts),
        dict(result.rule_counts),
        [(p.property_name, p.fingerprint) for p in result.problems],
    )


class _Steps:
    """An observer that only counts the steps it is told of (it makes the engine take its
    observed path, which expands batches apart from merging them)."""

    def __init__(self) -> None:
        self.steps = 0

    def __call__(self, *step: object) -> None:
        self.steps += 1


@pytest.mark.parametrize("budget", [1, 7, 1_000, 1_234])
def test_a_state_budget_stops_every_engine_at_exactly_that_many_states(budget):
    model = TwoPhaseModel(5)
    limits = Limits(max_states=budget)
    fast = search(model, limits=limits)
    assert fast.stopped_by == STATE_LIMIT and fast.distinct_states == budget
    assert not fast.complete and fast.verdict == "incomplete"
    observer = _Steps()
    observed = search(model, limits=limits, observer=observer)
    pooled = search(model, limits=limits, workers=2)
    assert _outcome(observed) == _outcome(fast), "observed"
    assert _outcome(pooled) == _outcome(fast), "pooled"
    # The observer is told of exactly the steps counted.
    assert observer.steps == fast.transitions


def test_a_state_budget_stops_a_group_world_alike_for_every_worker_count():
    model = load_model("eager-2").model
    limits = Limits(max_states=2_345)
    single = search(model, limits=limits)
    assert single.distinct_states == 2_345
    assert _outcome(search(model, limits=limits, workers=2)) == _outcome(single)


def test_a_budget_the_initial_states_fill_stops_before_any_expansion():
    result = search(TwoPhaseModel(3), limits=Limits(max_states=1))
    assert (result.stopped_by, result.distinct_states, result.transitions) == (STATE_LIMIT, 1, 0)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_time_limit_already_past_stops_before_any_expansion(workers):
    result = search(TwoPhaseModel(50), limits=Limits(max_seconds=0), workers=workers)
    assert result.stopped_by == TIME_LIMIT
    assert (result.transitions, result.depth, result.complete) == (0, 0, False)


def _ticks(deadline_after: int) -> Halt:
    """A halt whose clock moves one tick a reading: it stops after `deadline_after` readings."""
    ticks = itertools.count()
    return Halt(float(deadline_after), clock=lambda: float(next(ticks)))


def test_a_halt_stops_an_expansion_in_the_middle_of_a_state():
    # 200 resource managers: one state has 400 successors, each judged on 200 components, so a
    # search that looked at its clock between states only would overrun a limit by that much.
    model = TwoPhaseModel(200)
    expander = Expander(model)
    ((key, ids, _),) = list(expander.initial())
    whole = expander.expand_batch([(key, ids)], (), set())
    assert (
        whole.stopped is None and len(whole.targets) == 2 * 200 + 1
    )  # each RM prepares or aborts; the TM aborts
    expander.halt = _ticks(deadline_after=3)
    cut = expander.expand_batch([(key, ids)], (), set())
    assert cut.stopped == TIME_LIMIT and cut.partial
    # The state counts as unexpanded; the steps taken before the halt are those of the whole.
    assert cut.complete_parents == 0
    assert 0 < len(cut.targets) < len(whole.targets)
    assert cut.targets == whole.targets[: len(cut.targets)]


def test_a_room_ends_a_batch_after_the_state_that_fills_it():
    model = TwoPhaseModel(4)
    expander = Expander(model)
    frontier = [(key, ids) for key, ids, _ in expander.initial()]
    level = expander.expand_batch(frontier, (), set())
    states = [(level.targets[i], ids) for i, ids in level.candidates.items()]
    batch = expander.expand_batch(states, (), set(), room=1)
    assert batch.stopped == ROOM and len(batch.parents) == 1 and not batch.partial


def test_a_time_limit_leaves_the_liveness_properties_inconclusive_saying_why():
    model = TwoPhaseModel(3)
    result = search(model, record_graph=True)
    assert result.complete
    judged = check_liveness(model, result, _ticks(deadline_after=5))
    assert judged and {item.verdict for item in judged} == {"inconclusive"}
    assert {item.reason for item in judged} == {OUT_OF_TIME}
    # Without a halt the same graph is judged.
    assert {item.verdict for item in check_liveness(model, result)} == {"pass"}


def test_a_check_out_of_time_is_incomplete_with_its_liveness_unjudged():
    checked = check(TwoPhaseModel(4), limits=Limits(max_seconds=0))
    assert checked.verdict == "incomplete"
    assert checked.search.stopped_by == TIME_LIMIT
    assert checked.liveness and all(item.reason == OUT_OF_TIME for item in checked.liveness)
