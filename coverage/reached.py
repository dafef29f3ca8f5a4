"""Which rules runs reached: totals and families, one run or a matrix of presets.

A rule is reached by a run when some explored step fired it (`SearchResult.rule_counts`).
Rules come from two sides: the coordinator's (`spec/rules.py`, ids such as
`join.static_member_replaced`; its family is the first word) and the consumer's
(`spec/consumer/rules.py`, ids such as `client.discovery.found`; its family is the first two
words). Defensive coordinator rules, which guard states no request can reach (a Dead group
answering a request, for instance), are left out of the totals: a check that never reaches
them has nothing missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from groupspec.spec.consumer.rules import CONSUMER_RULE_IDS

COORDINATOR, CONSUMER = "coordinator", "consumer"
_WIDTH = 100  # the summary's lines, in characters


def side_of(rule_id: str) -> str:
    """`coordinator` or `consumer`: the side a rule id belongs to."""
    return CONSUMER if rule_id in CONSUMER_RULE_IDS else COORDINATOR


def family_of(rule_id: str) -> str:
    """A rule's family: the coordinator's first word (`join`), the consumer's first two
    (`client.discovery`)."""
    words = rule_id.split(".")
    return ".".join(words[:2]) if side_of(rule_id) == CONSUMER else words[0]


@dataclass(frozen=True)
class Family:
    """One family of rules: which were reached and which were not, in the order of its rules module."""

    side: str
    name: str
    reached: tuple[str, ...]
    never: tuple[str, ...]

    @property
    def size(self) -> int:
        """How many rules the family has."""
        return len(self.reached) + len(self.never)


def families(known: Sequence[str], reached: Iterable[str]) -> list[Family]:
    """The families of `known` rules (in their order) with what `reached` reached of them."""
    hit = set(reached)
    grouped: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for rule_id in known:
        yes, no = grouped.setdefault((side_of(rule_id), family_of(rule_id)), ([], []))
        (yes if rule_id in hit else no).append(rule_id)
    ordered = sorted(grouped.items(), key=lambda item: item[0][0] != COORDINATOR)
    return [Family(side, name, tuple(yes), tuple(no)) for (side, name), (yes, no) in ordered]


def totals_line(known: Sequence[str], reached: Iterable[str]) -> str:
    """`rules reached: 59/183 (coordinator 40/93, consumer 19/90)`."""
    hit = set(reached)
    parts = []
    for side in (COORDINATOR, CONSUMER):
        ids = [rule_id for rule_id in known if side_of(rule_id) == side]
        if ids:
            parts.append(f"{side} {sum(rule_id in hit for rule_id in ids)}/{len(ids)}")
    count = sum(rule_id in hit for rule_id in known)
    detail = f" ({', '.join(parts)})" if len(parts) > 1 else ""
    return f"rules reached: {count}/{len(known)}{detail}"


def never_lines(known: Sequence[str], reached: Iterable[str], *, verbose: bool) -> list[str]:
    """The rules never reached, summarized by family (every id with `verbose`)."""
    missing = [family for family in families(known, reached) if family.never]
    if not missing:
        return []
    if verbose:
        lines = ["never reached:"]
        for family in missing:
            lines.append(f"  {family.name} ({len(family.never)} of {family.size}):")
            lines.extend(f"    {rule_id}" for rule_id in family.never)
        return lines
    lines = ["never reached, per family (never/size; --verbose lists them):"]
    for side in (COORDINATOR, CONSUMER):
        counts = [
            f"{family.name} {len(family.never)}/{family.size}"
            for family in missing
            if family.side == side
        ]
        row: list[str] = []
        prefix = f"  {side}: "
        for count in counts:
            # A family's count is never split across lines.
            if row and len(prefix) + len(", ".join([*row, count])) > _WIDTH:
                lines.append(prefix + ", ".join(row) + ",")
                row, prefix = [], "    "
            row.append(count)
        if row:
            lines.append(prefix + ", ".join(row))
    return lines


@dataclass(frozen=True)
class Matrix:
    """Which rules each of several runs (by preset name) reached."""

    known: tuple[str, ...]
    reached: Mapping[str, frozenset[str]]

    @property
    def union(self) -> frozenset[str]:
        """The rules some run reached."""
        return frozenset().union(*self.reached.values()) if self.reached else frozenset()

    def unreached(self) -> tuple[str, ...]:
        """The known rules no run reached, in their order."""
        union = self.union
        return tuple(rule_id for rule_id in self.known if rule_id not in union)

    def as_json(self, runs: str = "presets") -> dict[str, object]:
        """The matrix as a JSON document (format 1); `runs` names the key of the per-run rules
        (`presets`, or `traces` for a campaign of traces)."""
        union = self.union
        return {
            "format": 1,
            runs: {name: sorted(rules) for name, rules in self.reached.items()},
            "totals": {
                side: {
                    "known": sum(side_of(rule_id) == side for rule_id in self.known),
                    "reached": sum(
                        side_of(rule_id) == side and rule_id in union for rule_id in self.known
                    ),
                }
                for side in (COORDINATOR, CONSUMER)
            },
            "never_reached": list(self.unreached()),
        }

    def text_lines(self, *, verbose: bool, runs: str = "presets") -> list[str]:
        """A table of families × presets (rules reached of the family's size), the union's
        totals, and what no preset reached; `runs` names the columns in the totals line."""
        names = list(self.reached)
        width = max([len(family.name) for family in families(self.known, ())] + [6])
        columns = [max(len(name), 7) for name in names]
        header = f"{'family':<{width}}  " + "  ".join(
            f"{name:>{column}}" for name, column in zip(names, columns, strict=True)
        )
        lines = [header + f"  {'union':>7}"]
        union = self.union
        for family in families(self.known, union):
            cells = []
            for name, column in zip(names, columns, strict=True):
                count = sum(rule_id in self.reached[name] for rule_id in family.reached)
                cells.append(f"{count:>{column - 3}}/{family.size:<2}")
            row = f"{family.name:<{width}}  " + "  ".join(cells)
            lines.append((row + f"  {len(family.reached):>4}/{family.size:<2}").rstrip())
        lines.append(totals_line(self.known, union) + f" by the union of {len(names)} {runs}")
        lines.extend(never_lines(self.known, union, verbose=verbose))
        return lines

    def markdown(self) -> str:
        """The rule × preset table of docs/coverage.md: every known rule, a mark where a preset
        reached it."""
        names = list(self.reached)
        union = self.union
        lines = [
            totals_line(self.known, union) + f", by the union of {len(names)} presets.",
            "",
            "| rule | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names),
        ]
        for family in families(self.known, union):
            for rule_id in (*family.reached, *family.never):
                marks = ["✓" if rule_id in self.reached[name] else "" for name in names]
                shown = rule_id if rule_id in union else f"**{rule_id}**"
                lines.append(f"| {shown} | " + " | ".join(marks) + " |")
        return "\n".join(lines) + "\n"
