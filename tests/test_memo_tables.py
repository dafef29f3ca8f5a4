"""The models' memo tables change no result: a world with them and one without explore the same
states in the same order, count the same transitions and rules, and fail the same way."""

import pytest

from groupspec.checker.bfs import search
from groupspec.models.group_world import GroupWorld
from groupspec.models.memo import Memo
from groupspec.models.presets import load_preset

CASES = [
    ("static-2", {"max_generation": "1"}),
    ("eager-2", {"fault": "KAFKA-2555"}),
    ("cooperative-3", {"clients": "2", "partition_growths": "1", "fault": "KAFKA-12984"}),
    ("failover", {"clients": "1"}),
    ("eager-3", {"max_generation": "1"}),
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
