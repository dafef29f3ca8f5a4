"""Which rules runs reached: totals and families, one run or a matrix of presets.

A rule is reached by a run when some explored step fired it (`SearchResult.rule_counts`).
Rules come from two sides: the coordinator's (`spec/rules.py`, ids such as
`join.static_member_replaced`; its family is the first word) and the consumer's
(`spec/consumer/rules.py`, ids such as `client.discovery.found`; its family is the first two
words). Defensive coordinator rules, which guard states no request can reach (a Dead group
answering a request, for instance), are left out of the totals: a check that never reaches
them has nothing missing. A matrix may still list them apart (`Matrix.apart`): its table has a
row for them and its totals line says how many were reached.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from groupspec.spec.consumer.rules import CONSUMER_RULE_IDS
from groupspec.spec.kip848.consumer.rules import KIP848_CONSUMER_RULE_IDS

COORDINATOR, CONSUMER = "coordinator", "consumer"
_WIDTH = 100  # the summary's lines, in characters
_APART_ROW = "(defensive)"  # the table row of the rules apart


def side_of(rule_id: str) -> str:
    """`coordinator` or `consumer`: the side a rule id belongs to (a KIP-848 consumer's rule,
    `cg_client.*`, is the consumer's side of the KIP-848 world)."""
    if rule_id in CONSUMER_RULE_IDS or rule_id in KIP848_CONSUMER_RULE_IDS:
        return CONSUMER
    return COORDINATOR


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


def apart_line(apart: Sequence[str], reached: Iterable[str]) -> str:
    """`defensive rules, apart: 0/9 reached`: the rules a report lists but does not count."""
    hit = set(reached)
    return (
        f"defensive rules, apart: {sum(rule_id in hit for rule_id in apart)}/{len(apart)} reached"
    )


@dataclass(frozen=True)
class Matrix:
    """Which rules each of several runs (by preset name) reached, of the `known` rules they can
    be expected to reach; `apart` are rules listed but not counted (the defensive ones)."""

    known: tuple[str, ...]
    reached: Mapping[str, frozenset[str]]
    apart: tuple[str, ...] = ()

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
            **(
                {
                    "defensive": {
                        "known": len(self.apart),
                        "reached": sum(rule_id in union for rule_id in self.apart),
                    },
                    "defensive_never_reached": [r for r in self.apart if r not in union],
                }
                if self.apart
                else {}
            ),
        }

    def text_lines(self, *, verbose: bool, runs: str = "presets") -> list[str]:
        """A table of families × presets (rules reached of the family's size; the rules apart on
        a row of their own), the union's totals, and what no preset reached; `runs` names the
        columns in the totals line."""
        names = list(self.reached)
        labels = [family.name for family in families(self.known, ())]
        width = max([len(label) for label in labels] + [len(_APART_ROW) if self.apart else 6])
        columns = [max(len(name), 7) for name in names]
        header = f"{'family':<{width}}  " + "  ".join(
            f"{name:>{column}}" for name, column in zip(names, columns, strict=True)
        )
        lines = [header + f"  {'union':>7}"]
        union = self.union
        rows = [
            (family.name, (*family.reached, *family.never))
            for family in families(self.known, union)
        ]
        if self.apart:
            rows.append((_APART_ROW, self.apart))
        for label, ids in rows:
            cells = [
                f"{sum(rule_id in self.reached[name] for rule_id in ids):>{column - 3}}/{len(ids):<2}"
                for name, column in zip(names, columns, strict=True)
            ]
            hit = sum(rule_id in union for rule_id in ids)
            row = f"{label:<{width}}  " + "  ".join(cells)
            lines.append((row + f"  {hit:>4}/{len(ids):<2}").rstrip())
        totals = totals_line(self.known, union) + f" by the union of {len(names)} {runs}"
        lines.append(f"{totals}; {apart_line(self.apart, union)}" if self.apart else totals)
        lines.extend(never_lines(self.known, union, verbose=verbose))
        if verbose and self.apart:
            lines.append("defensive, apart (no request reaches them; docs/coverage.md):")
            lines.extend(
                f"  {rule_id}{' (reached)' if rule_id in union else ''}" for rule_id in self.apart
            )
        return lines
