"""Rule coverage of the reference presets: measured by exhaustive checks, or as recorded.

Each group-world preset's `[expected]` table records the rules its exhaustive check fires
(`rules_reached`); a test keeps the record true, so a rule that stops being reached fails CI.
`measured` runs the checks; `recorded` reads the records (what docs/coverage.md is made of).
Both count each preset against the rules of the Kafka version profile it checks
(`profiles.ProfileCoverage`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from groupspec.checker.bfs import search
from groupspec.models.preset_models import (
    LoadedModel,
    group_preset_names,
    group_world_rules,
    kip848_preset_names,
    kip848_world_rules,
    load_model,
)
from groupspec.models.presets import KIP848_KIND, MIXED_KIND, preset_names
from groupspec.spec.config import KAFKA_4X, KAFKA_VERSIONS
from groupspec.spec.kip848.rules import KIP848_RULES
from groupspec.spec.rules import reachable_rule_ids

from .profiles import ProfileCoverage, defensive_rules
from .reached import Matrix


def known_group_rules(kafka_version: str = KAFKA_4X) -> tuple[str, ...]:
    """The rules a group world of the `kafka_version` profile can be expected to reach."""
    return group_world_rules(kafka_version)


def known_coordinator_rules(*kafka_versions: str) -> tuple[str, ...]:
    """The coordinator's rules a trace judged under the `kafka_versions` profiles can show (the
    oracle judges no consumer): each profile's own (spec/rules.py `reachable_rule_ids`), in
    one sorted list; the default profile's if none is given."""
    rules = frozenset().union(*(reachable_rule_ids(v) for v in kafka_versions or (KAFKA_4X,)))
    return tuple(sorted(rules))


def profile_of(loaded: LoadedModel) -> str:
    """The Kafka version profile a loaded group-world preset checks."""
    return str(loaded.parameters.get("kafka_version", KAFKA_4X))


# The kinds of world whose rules are the KIP-848 world's (spec/kip848/rules.py and its consumer).
_KIP848_KINDS = (KIP848_KIND, MIXED_KIND)


def reference_preset_names() -> tuple[str, ...]:
    """The presets whose coverage is reported: the group worlds', then the KIP-848 worlds' and
    the mixed worlds' (classic and KIP-848 consumers in one group)."""
    return (*group_preset_names(), *kip848_preset_names(), *preset_names(MIXED_KIND))


def kip848_matrix(reached: Mapping[str, frozenset[str]]) -> Matrix:
    """The KIP-848 presets (name -> rules reached) against the KIP-848 world's rules, the
    coordinator's defensive ones apart."""
    defensive = tuple(sorted(rule.rule_id for rule in KIP848_RULES if rule.defensive))
    return Matrix(kip848_world_rules(), dict(reached), defensive)


def by_profile(
    reached: Mapping[str, tuple[str, frozenset[str]]],
    kip848: Mapping[str, frozenset[str]] | None = None,
) -> ProfileCoverage:
    """The coverage of presets given as name -> (profile, rules reached): one matrix per profile,
    its presets in the given order, against that profile's rules with its defensive ones apart;
    and the matrix of the KIP-848 presets (`kip848`: name -> rules reached)."""
    return ProfileCoverage(
        {
            version: Matrix(
                known_group_rules(version),
                {name: rules for name, (profile, rules) in reached.items() if profile == version},
                defensive_rules(version),
            )
            for version in KAFKA_VERSIONS
        },
        kip848_matrix(kip848 or {}),
    )


def measured(
    presets: Sequence[str],
    *,
    workers: int = 1,
    progress: Callable[[str, int, int, float], None] | None = None,
) -> ProfileCoverage:
    """Check each preset exhaustively (safety only) and collect the rules it fired;
    `progress(preset, states, rules, seconds)` after each."""
    reached: dict[str, tuple[str, frozenset[str]]] = {}
    kip848: dict[str, frozenset[str]] = {}
    for name in presets:
        loaded = load_model(name)
        result = search(loaded.model, workers=workers)
        if not result.complete:
            raise RuntimeError(f"{name}: the search stopped early ({result.stopped_by})")
        rules = frozenset(result.rule_counts)
        if loaded.kind in _KIP848_KINDS:
            kip848[name] = rules
        else:
            reached[name] = (profile_of(loaded), rules)
        if progress is not None:
            progress(name, result.distinct_states, len(rules), result.elapsed_s)
    return by_profile(reached, kip848)


def recorded(presets: Sequence[str] | None = None) -> ProfileCoverage:
    """The rules each preset's `[expected] rules_reached` records (every group and KIP-848
    preset by default); ValueError naming a preset that records none."""
    reached: dict[str, tuple[str, frozenset[str]]] = {}
    kip848: dict[str, frozenset[str]] = {}
    for name in presets or reference_preset_names():
        loaded = load_model(name)
        expected = loaded.expected
        if expected is None or expected.rules_reached is None:
            raise ValueError(f"{name}: its [expected] table records no rules_reached")
        if loaded.kind in _KIP848_KINDS:
            kip848[name] = frozenset(expected.rules_reached)
        else:
            reached[name] = (profile_of(loaded), frozenset(expected.rules_reached))
    return by_profile(reached, kip848)


def known_consumer_protocol_rules() -> tuple[str, ...]:
    """The consumer-protocol (KIP-848) coordinator rules a trace can show: the non-defensive
    rules of spec/kip848/rules.py, sorted (a defensive rule guards what no broker sends)."""
    return tuple(sorted(rule.rule_id for rule in KIP848_RULES if not rule.defensive))


def consumer_protocol_line(reached: frozenset[str] | set[str]) -> str:
    """`consumer-protocol rules exercised: 18/40 (45%)` for the rules `reached`."""
    known = known_consumer_protocol_rules()
    hit = sum(rule_id in reached for rule_id in known)
    return f"consumer-protocol rules exercised: {hit}/{len(known)} ({100 * hit // len(known)}%)"
