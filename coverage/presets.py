"""Rule coverage of the reference presets: measured by exhaustive checks, or as recorded.

Each group-world preset's `[expected]` table records the rules its exhaustive check fires
(`rules_reached`); a test keeps the record true, so a rule that stops being reached fails CI.
`measured` runs the checks; `recorded` reads the records (what docs/coverage.md is made of).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from groupspec.checker.bfs import search
from groupspec.models.preset_models import group_preset_names, load_model
from groupspec.spec.config import KAFKA_4X
from groupspec.spec.rules import reachable_rule_ids

from .reached import Matrix


def known_group_rules() -> tuple[str, ...]:
    """The rules a group world can be expected to reach (the same for every preset)."""
    return load_model(group_preset_names()[0]).known_rules


def known_coordinator_rules(*kafka_versions: str) -> tuple[str, ...]:
    """The coordinator's rules a trace judged under the `kafka_versions` profiles can show (the
    oracle judges no consumer): each profile's own (spec/rules.py `reachable_rule_ids`), in
    one sorted list; the default profile's if none is given."""
    rules = frozenset().union(*(reachable_rule_ids(v) for v in kafka_versions or (KAFKA_4X,)))
    return tuple(sorted(rules))


def measured(
    presets: Sequence[str],
    *,
    workers: int = 1,
    progress: Callable[[str, int, int, float], None] | None = None,
) -> Matrix:
    """Check each preset exhaustively (safety only) and collect the rules it fired;
    `progress(preset, states, rules, seconds)` after each."""
    reached: dict[str, frozenset[str]] = {}
    known: tuple[str, ...] = ()
    for name in presets:
        loaded = load_model(name)
        known = known or loaded.known_rules
        result = search(loaded.model, workers=workers)
        if not result.complete:
            raise RuntimeError(f"{name}: the search stopped early ({result.stopped_by})")
        reached[name] = frozenset(result.rule_counts)
        if progress is not None:
            progress(name, result.distinct_states, len(reached[name]), result.elapsed_s)
    return Matrix(known or known_group_rules(), reached)


def recorded(presets: Sequence[str] | None = None) -> Matrix:
    """The rules each preset's `[expected] rules_reached` records (every group preset by
    default); ValueError naming a preset that records none."""
    reached: dict[str, frozenset[str]] = {}
    for name in presets or group_preset_names():
        expected = load_model(name).expected
        if expected is None or expected.rules_reached is None:
            raise ValueError(f"{name}: its [expected] table records no rules_reached")
        reached[name] = frozenset(expected.rules_reached)
    return Matrix(known_group_rules(), reached)
