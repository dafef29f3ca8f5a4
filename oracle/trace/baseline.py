"""Baselines: the divergences a broker's team has accepted, so that CI fails only on new ones.

A broker judged in its own CI (docs/oracle.md, "In a broker's own CI") may diverge in ways its
team knows and has not fixed yet. A baseline file, committed in their repository, lists those
kinds of divergence; `validate --baseline FILE` still reports every divergence, marks the kinds
the baseline accepts as known, and exits 1 only on a kind it does not accept. A kind is what
groups divergences in the report: the API, the kind (`response`, `early`, `undecodable`,
`unanswered`, `late`), the first field that differs and the specification rule(s) that
produced the allowed response. An entry may leave out the field or the rule to accept any.

    [[accepted]]
    api = "JoinGroup"
    kind = "response"
    field = "generation_id"
    why = "generations start at 0 (our issue 12)"

`baseline_toml` writes the kinds seen in a run as a starting baseline (`--write-baseline`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .profiles import ProfileReading, read_toml

GroupKey = tuple[str, str, str, str]
ENTRY_KEYS = ("api", "kind", "field", "rule", "why")
REQUIRED_KEYS = ("api", "kind")


class BaselineError(Exception):
    """A baseline file that cannot be used: names the file and line."""


@dataclass(frozen=True)
class Accepted:
    """One accepted kind of divergence; an empty `field` or `rule` matches any."""

    api: str
    kind: str
    field: str = ""
    rule: str = ""
    why: str = ""

    def matches(self, key: GroupKey) -> bool:
        """Whether this entry accepts divergences of the group `key` (api, kind, field, rule)."""
        api, kind, field, rule = key
        return (
            self.api == api
            and self.kind == kind
            and self.field in ("", field)
            and self.rule in ("", rule)
        )

    def describe(self) -> str:
        """The entry in one line, as the report names it."""
        parts = [self.api, self.kind]
        parts += [f"field {self.field}"] if self.field else []
        parts += [f"rule {self.rule}"] if self.rule else []
        return ", ".join(parts)


@dataclass(frozen=True)
class Baseline:
    """The accepted kinds of divergence of one baseline file."""

    source: str
    accepted: tuple[Accepted, ...] = ()

    def accepts(self, key: GroupKey) -> Accepted | None:
        """The first entry accepting divergences of the group `key`, if any."""
        return next((entry for entry in self.accepted if entry.matches(key)), None)

    def unused(self, keys: Iterable[GroupKey]) -> tuple[Accepted, ...]:
        """The entries that accept none of `keys` (fixed divergences, or never seen here)."""
        seen = list(keys)
        return tuple(e for e in self.accepted if not any(e.matches(k) for k in seen))


def read_baseline(path: Path) -> Baseline:
    """The baseline in the TOML file `path`; BaselineError naming the file and line of what is
    wrong in it."""
    reading, document = read_toml(path, "baseline", BaselineError)
    unknown = sorted(set(document) - {"accepted"})
    if unknown:
        raise BaselineError(
            f"{reading.where(unknown[0])}: unknown key {unknown[0]!r}; a baseline has "
            "[[accepted]] entries only"
        )
    entries = document.get("accepted", [])
    if not isinstance(entries, list):
        raise BaselineError(f"{reading.where('accepted')}: accepted must be [[accepted]] tables")
    return Baseline(str(path), tuple(_entry(reading, n, e) for n, e in enumerate(entries, 1)))


def _entry(reading: ProfileReading, number: int, entry: Any) -> Accepted:
    where = _entry_line(reading, number)
    if not isinstance(entry, dict):
        raise BaselineError(f"{where}: each accepted entry must be a table")
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise BaselineError(
            f"{where}: unknown key {unknown[0]!r} in accepted entry {number}; "
            f"known: {', '.join(ENTRY_KEYS)}"
        )
    for key in REQUIRED_KEYS:
        if key not in entry:
            raise BaselineError(f"{where}: accepted entry {number} has no {key!r}")
    for key, value in entry.items():
        if not isinstance(value, str):
            raise BaselineError(f"{where}: {key} in accepted entry {number} must be a string")
    return Accepted(**entry)


def _entry_line(reading: ProfileReading, number: int) -> str:
    """`path:line` of the `number`th `[[accepted]]` header."""
    seen = 0
    for line_number, line in enumerate(reading.lines, start=1):
        if line.strip().startswith("[[accepted]]"):
            seen += 1
            if seen == number:
                return f"{reading.path}:{line_number}"
    return str(reading.path)


def baseline_toml(found: dict[GroupKey, str]) -> str:
    """A baseline accepting each kind of divergence in `found` (each with where it was first
    seen, as its `why` until someone writes a better one)."""
    lines = [
        "# Divergences accepted by `groupspec validate --baseline` (docs/oracle.md).",
        "# Written by --write-baseline: say in each `why` why it is accepted.",
    ]
    for (api, kind, field, rule), where in sorted(found.items()):
        lines += ["", "[[accepted]]", f"api = {_quoted(api)}", f"kind = {_quoted(kind)}"]
        lines += [f"field = {_quoted(field)}"] if field else []
        lines += [f"rule = {_quoted(rule)}"] if rule else []
        lines.append(f"why = {_quoted(f'first seen at {where}')}")
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    """`text` as a TOML basic string."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in escaped) + '"'
