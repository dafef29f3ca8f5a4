"""Rule coverage of the reference presets, profile by profile: every rule counted once.

A preset checks one Kafka version profile's coordinator (its `kafka_version`). Each profile has
its own rules: those of both profiles, the few of that release only (`.kafka_3x` rules, and the
default rules the Scala coordinator has no branch for), and the defensive ones, which no
request reaches and which are listed apart, never counted. `ProfileCoverage` holds one `Matrix`
per profile (its presets against its rules) and sums them up over every rule of both sides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from groupspec.spec.config import KAFKA_VERSIONS
from groupspec.spec.consumer.rules import CONSUMER_RULE_IDS
from groupspec.spec.rules import RULES

from .reached import CONSUMER, COORDINATOR, Matrix, apart_line, families, side_of, totals_line

JSON_FORMAT = 2
KIP848_TITLE = "KIP-848 (the consumer-protocol coordinator and its Java consumer)"
BOTH = "both profiles"
DEFENSIVE = "defensive"


def defensive_rules(kafka_version: str) -> tuple[str, ...]:
    """The defensive coordinator rules of a profile, sorted: shown apart, never counted."""
    return tuple(
        sorted(
            rule.rule_id
            for rule in RULES
            if rule.defensive and kafka_version in rule.kafka_versions
        )
    )


def every_rule() -> tuple[str, ...]:
    """Every rule of both sides, coordinator first, each side sorted."""
    coordinator = sorted(rule.rule_id for rule in RULES)
    return (*coordinator, *sorted(CONSUMER_RULE_IDS))


def rule_kind(rule_id: str) -> str:
    """Which coordinators have a coordinator rule: `both profiles`, `4.x only`, `3.x only`, or
    `defensive` (whichever profiles have it)."""
    rule = next(rule for rule in RULES if rule.rule_id == rule_id)
    if rule.defensive:
        return DEFENSIVE
    if rule.kafka_versions == tuple(KAFKA_VERSIONS):
        return BOTH
    return f"{', '.join(rule.kafka_versions)} only"


def profile_title(kafka_version: str) -> str:
    """`Kafka 3.x profile (the Scala GroupCoordinator of Kafka 2.8.1 to 3.9)`."""
    return f"Kafka {kafka_version} profile ({KAFKA_VERSIONS[kafka_version]})"


@dataclass(frozen=True)
class ProfileCoverage:
    """The rules each preset reached, grouped by the profile it checks: one matrix per profile
    (in `KAFKA_VERSIONS` order; a profile no preset checks has an empty one). The KIP-848
    presets have a matrix of their own (`kip848`), against the KIP-848 world's rules: none of
    the classic figures counts them."""

    profiles: Mapping[str, Matrix]
    kip848: Matrix = field(default_factory=lambda: Matrix((), {}))

    @property
    def reached(self) -> dict[str, frozenset[str]]:
        """The rules each preset reached, every profile's presets in order."""
        return {name: rules for m in self.profiles.values() for name, rules in m.reached.items()}

    @property
    def every_preset(self) -> dict[str, frozenset[str]]:
        """The rules each preset reached, the classic profiles' then the KIP-848 presets'."""
        return {**self.reached, **self.kip848.reached}

    @property
    def union(self) -> frozenset[str]:
        """The rules some preset of some profile reached."""
        return frozenset().union(*(matrix.union for matrix in self.profiles.values()))

    def unreached(self) -> tuple[str, ...]:
        """Every rule no preset reached (the defensive ones included), in `every_rule` order."""
        union = self.union
        return tuple(rule_id for rule_id in every_rule() if rule_id not in union)

    def kinds(self) -> dict[str, tuple[int, int]]:
        """The coordinator's rules by kind (`rule_kind`): (reached, known) of each."""
        union = self.union
        counts: dict[str, tuple[int, int]] = {}
        for rule_id in every_rule():
            if side_of(rule_id) != COORDINATOR:
                continue
            reached, known = counts.get(rule_kind(rule_id), (0, 0))
            counts[rule_kind(rule_id)] = (reached + (rule_id in union), known + 1)
        order = [BOTH, *(f"{version} only" for version in KAFKA_VERSIONS), DEFENSIVE]
        return {kind: counts[kind] for kind in order if kind in counts}

    def every_rule_line(self) -> str:
        """`every rule: 178/196 (coordinator 97/106: both profiles 88/88, 4.x only 4/4, 3.x only
        5/5, defensive 0/9; consumer 81/90) by the union of 15 presets`."""
        union = self.union
        rules = every_rule()
        coordinator = [rule_id for rule_id in rules if side_of(rule_id) == COORDINATOR]
        consumer = [rule_id for rule_id in rules if side_of(rule_id) == CONSUMER]
        kinds = ", ".join(f"{kind} {hit}/{known}" for kind, (hit, known) in self.kinds().items())
        return (
            f"every rule: {sum(r in union for r in rules)}/{len(rules)} "
            f"(coordinator {sum(r in union for r in coordinator)}/{len(coordinator)}: {kinds}; "
            f"consumer {sum(r in union for r in consumer)}/{len(consumer)}) "
            f"by the union of {len(self.reached)} presets"
        )

    def text_lines(self, *, verbose: bool) -> list[str]:
        """Each profile's table of families × presets with its totals and what its presets never
        reached, then the line that counts every rule."""
        lines: list[str] = []
        for version, matrix in self.profiles.items():
            count = len(matrix.reached)
            lines.append(f"{profile_title(version)}: {count} preset{'s' * (count != 1)}")
            if matrix.reached:
                lines.extend(matrix.text_lines(verbose=verbose))
            else:
                lines.append("  no preset checks this profile: none of its rules is reached")
            lines.append("")
        lines.append(self.every_rule_line())
        if self.kip848.reached:
            count = len(self.kip848.reached)
            lines += ["", f"{KIP848_TITLE}: {count} preset{'s' * (count != 1)}"]
            lines.extend(self.kip848.text_lines(verbose=verbose))
        return lines

    def as_json(self) -> dict[str, object]:
        """The coverage as a JSON document (format 2): each profile's matrix, and every rule."""
        union = self.union
        profiles: dict[str, object] = {}
        for version, matrix in self.profiles.items():
            document = matrix.as_json()
            del document["format"]
            profiles[version] = {"coordinator": KAFKA_VERSIONS[version], **document}
        rules = every_rule()
        return {
            "format": JSON_FORMAT,
            "profiles": profiles,
            "presets": {name: sorted(rules) for name, rules in self.reached.items()},
            "totals": {
                **{
                    side: {
                        "known": sum(side_of(r) == side for r in rules),
                        "reached": sum(side_of(r) == side and r in union for r in rules),
                    }
                    for side in (COORDINATOR, CONSUMER)
                },
                "coordinator_by_kind": {
                    kind: {"known": known, "reached": hit}
                    for kind, (hit, known) in self.kinds().items()
                },
            },
            "never_reached": list(self.unreached()),
            "kip848": self.kip848.as_json(),
        }

    def markdown(self) -> str:
        """docs/coverage.md's block: each profile's totals, the line of every rule, and one table
        of every rule × every preset (✓ reached, — not a rule of that preset's profile), the
        defensive rules last and apart."""
        union = self.union
        lines = []
        for version, matrix in self.profiles.items():
            totals = totals_line(matrix.known, matrix.union)
            lines.append(
                f"- {profile_title(version)}: {totals}, by the union of "
                f"{len(matrix.reached)} presets; {apart_line(matrix.apart, matrix.union)}."
            )
        lines.append(f"- {_capitalized(self.every_rule_line())}.")
        names = list(self.reached)
        profile_of = {name: m for m in self.profiles.values() for name in m.reached}
        lines += ["", "| rule | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        counted = sorted({r for m in self.profiles.values() for r in m.known}, key=_rule_order)
        for family in families(counted, union):
            for rule_id in (*family.reached, *family.never):
                shown = rule_id if rule_id in union else f"**{rule_id}**"
                lines.append(_markdown_row(shown, rule_id, names, profile_of))
        apart = sorted({r for m in self.profiles.values() for r in m.apart}, key=_rule_order)
        if apart:
            lines.append(f"| *{DEFENSIVE}, apart: not counted* |" + " |" * len(names))
            lines.extend(_markdown_row(rule_id, rule_id, names, profile_of) for rule_id in apart)
        return "\n".join(lines) + "\n"


def kip848_markdown(matrix: Matrix) -> str:
    """docs/coverage.md's KIP-848 block: the totals and one table of every KIP-848 rule × every
    KIP-848 preset (✓ reached; bold: no preset reaches it), the defensive ones last, apart."""
    union = matrix.union
    names = list(matrix.reached)
    totals = totals_line(matrix.known, union)
    lines = [
        f"- {KIP848_TITLE}: {totals}, by the union of {len(names)} presets; "
        f"{apart_line(matrix.apart, union)}.",
        "",
        "| rule | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    of = dict.fromkeys(names, matrix)
    for family in families(matrix.known, union):
        for rule_id in (*family.reached, *family.never):
            shown = rule_id if rule_id in union else f"**{rule_id}**"
            lines.append(_markdown_row(shown, rule_id, names, of))
    if matrix.apart:
        lines.append(f"| *{DEFENSIVE}, apart: not counted* |" + " |" * len(names))
        lines.extend(_markdown_row(rule_id, rule_id, names, of) for rule_id in matrix.apart)
    return "\n".join(lines) + "\n"


def _markdown_row(shown: str, rule_id: str, names: Sequence[str], of: Mapping[str, Matrix]) -> str:
    marks = []
    for name in names:
        matrix = of[name]
        if rule_id not in matrix.known and rule_id not in matrix.apart:
            marks.append("—")
        else:
            marks.append("✓" if rule_id in matrix.reached[name] else "")
    return f"| {shown} | " + " | ".join(marks) + " |"


def _rule_order(rule_id: str) -> tuple[bool, str]:
    return (side_of(rule_id) != COORDINATOR, rule_id)


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]
