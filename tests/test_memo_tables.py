"""The models' memo tables change no result: a world with them and one without explore the same
states in the same order, count the same transitions and rules, and fail the same way."""

from dataclasses import replace

import pytest

from groupspec.checker.bfs import search
from groupspec.checker.derived import transitions
from groupspec.models.group_world import GroupWorld
from groupspec.models.memo import Memo
from groupspec.models.presets import load_preset
from groupspec.models.world_state import canonical_repr, evolve
from groupspec.spec.assignment import Cluster

CASES = [
    ("static-2", {"max_generation": "1"}),
    ("eager-2", {"fault": "KAFKA-2555"}),
    (
        "cooperative-3",
        {"clients": "2", "partition_growths": "1", "max_generation": "2", "fault": "KAFKA-12984"},
    ),
    ("failover", {"clients": "1"}),
]


def summary(world):
    result = search(world)
    return (
        list(result.parents.items()),
        result.transitions,
        result.depth,
        dict(result.action_counts),
        dict(result.rule_counts),
        [(p.problem, p.path) for p in result.problems],
    )


@pytest.mark.parametrize(("name", "overrides"), CASES)
def test_memo_tables_change_no_result(name, overrides):
    memoized = load_preset(name, overrides)
    plain = GroupWorld(memoized.parameters, memoized.name, memoize=False)
    assert summary(memoized) == summary(plain)


def test_a_second_search_with_warm_tables_agrees_with_the_first():
    world = load_preset("eager-2", {"fault": "KAFKA-2555"})
    assert summary(world) == summary(world)


def test_memo_forgets_everything_past_its_limit_and_recomputes():
    calls = []
    memo: Memo[int, int] = Memo(limit=2)

    def square(n):
        calls.append(n)
        return n * n

    assert [memo.get(n, lambda n=n: square(n)) for n in (1, 2, 1, 3, 1)] == [1, 4, 1, 9, 1]
    assert calls == [1, 2, 3, 1]  # 3 arrived with the table full: it was cleared, 1 recomputed
    assert len(memo) == 2


def test_disabled_memo_always_computes():
    memo: Memo[int, int] = Memo(enabled=False)
    assert [memo.get(1, lambda: len(memo)) for _ in range(3)] == [0, 0, 0]
    assert len(memo) == 0


def test_evolve_copies_fields_forgets_remembered_values_and_rejects_unknown_fields():
    world = load_preset("static-2")
    state = world.initial_states()[0]
    text = canonical_repr(state)  # remembered on the state
    budgets = evolve(state.budgets, commits=state.budgets.commits + 1)
    copy = evolve(state, budgets=budgets)
    assert copy == replace(state, budgets=budgets)
    assert "_canonical_repr" in state.__dict__ and "_canonical_repr" not in copy.__dict__
    assert canonical_repr(copy) != text
    with pytest.raises(TypeError, match="no fields"):
        evolve(state, nonsense=1)


def test_evolve_runs_post_init_checks():
    with pytest.raises(ValueError, match="unique and sorted"):
        evolve(Cluster.of({"t": 1}), partitions_per_topic=(("b", 1), ("a", 1)))


def reference_text(value):
    """The canonical text as first specified: generic, recursive, nothing remembered."""
    if type(value) is tuple:
        texts = [reference_text(item) for item in value]
        return f"({texts[0]},)" if len(texts) == 1 else "(" + ", ".join(texts) + ")"
    if isinstance(value, frozenset):
        return "frozenset({" + ", ".join(sorted(reference_text(item) for item in value)) + "})"
    fields = getattr(type(value), "__dataclass_fields__", None)
    if fields is None:
        return repr(value)
    inner = ", ".join(f"{name}={reference_text(getattr(value, name))}" for name in fields)
    return f"{type(value).__qualname__}({inner})"


@pytest.mark.parametrize("name", ["mixed", "failover", "static-2"])
def test_specialized_texts_equal_the_generic_text(name):
    world = load_preset(name)
    state = world.representative(world.initial_states()[0])
    frontier, seen = [state], 0
    while frontier and seen < 300:
        state = frontier.pop()
        seen += 1
        for transition in transitions(world, state):
            for candidate in (transition.state, world.representative(transition.state)):
                assert canonical_repr(candidate) == reference_text(candidate)
                for slot in candidate.clients:
                    assert canonical_repr(slot) == reference_text(slot)
            frontier.append(world.representative(transition.state))
