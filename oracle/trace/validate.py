"""Validate a trace file against the specification: a verdict, every divergence grouped by kind
(the first of each shown with the shortest excerpt of the trace that still leads to it), and
the share of events judged."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupspec.spec.config import KAFKA_4X, CoordinatorConfig
from groupspec.vocabulary.errors import InvalidConfigError
from groupspec.wire.trace_format import (
    REQUEST,
    RESPONSE,
    TraceEvent,
    TraceFormatError,
    TraceHeader,
    TraceReading,
    parse_lines,
    text_lines,
)

from .oracle import (
    LATE,
    UNANSWERED,
    Divergence,
    ObservationError,
    Oracle,
    OracleCounts,
    Tolerated,
)
from .profiles import DeviationProfile, coordinator_setting_names
from .tracker import OracleSettings, TooAmbiguous

PASS = "pass"
DIVERGED = "diverged"
UNDECIDED = "undecided"
# Re-validations spent shrinking a divergence's excerpt: each replays a short trace.
SHRINK_BUDGET = 400


class TraceInputError(Exception):
    """A trace, or settings for it, that cannot be validated: names the file and line."""


@dataclass(frozen=True)
class DivergenceGroup:
    """Divergences of one kind (API, kind, field, rule): how many, where, the first in full,
    and the shortest excerpt found leading to the first."""

    first: Divergence
    lines: tuple[int, ...]
    excerpt: tuple[str, ...]

    @property
    def count(self) -> int:
        """How many divergences of this kind."""
        return len(self.lines)

    def to_json(self) -> dict[str, Any]:
        """The group as a JSON object."""
        api, kind, field, rule = self.first.group_key
        return {
            "api": api,
            "kind": kind,
            "field": field,
            "rule": rule,
            "count": self.count,
            "first_line": self.first.line,
            "lines": list(self.lines),
            "first": self.first.to_json(),
            "excerpt": list(self.excerpt),
        }


@dataclass(frozen=True)
class Verdict:
    """The judgement of one trace."""

    source: str
    status: str
    counts: OracleCounts
    divergences: tuple[Divergence, ...]
    groups: tuple[DivergenceGroup, ...]
    cut_at_line: int | None
    elapsed_s: float
    note: str = ""
    tolerated: tuple[Tolerated, ...] = ()
    profile: DeviationProfile = field(default_factory=DeviationProfile)
    # The specification rules the trace exercised (`Oracle.rules_exercised`).
    rules: frozenset[str] = frozenset()
    mid_stream: bool = False
    # The Kafka version profile the specification followed (CoordinatorConfig.kafka_version).
    kafka_version: str = KAFKA_4X

    @property
    def passed(self) -> bool:
        """Whether every response was one the specification allows."""
        return self.status == PASS

    @property
    def divergence(self) -> Divergence | None:
        """The first divergence, if any."""
        return self.divergences[0] if self.divergences else None

    @property
    def excerpt(self) -> tuple[str, ...]:
        """The excerpt leading to the first divergence."""
        return self.groups[0].excerpt if self.groups else ()

    def tolerated_by_name(self) -> dict[str, list[int]]:
        """The lines of the tolerated deviations, per tolerance, in order of first occurrence."""
        found: dict[str, list[int]] = {}
        for tolerated in self.tolerated:
            found.setdefault(tolerated.name, []).append(tolerated.line)
        return found

    @property
    def judged_fraction(self) -> float:
        """The share of the trace's events judged against a specification state."""
        return self.counts.judged / self.counts.events if self.counts.events else 1.0

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object."""
        return {
            "trace": self.source,
            "status": self.status,
            "kafka_version": self.kafka_version,
            "events": self.counts.events,
            "judged_events": self.counts.judged,
            "judged_fraction": round(self.judged_fraction, 4),
            "divergence_count": len(self.divergences),
            "requests": self.counts.requests,
            "responses_checked": self.counts.responses_checked,
            "skipped_requests": self.counts.skipped,
            "skipped_apis": self.counts.skipped_apis,
            "foreign_groups_ignored": self.counts.foreign_groups,
            "coordinator_moves_followed": self.counts.coordinator_moves,
            "mid_stream": (
                {
                    "groups_learned": self.counts.groups_learned,
                    "pending_members_learned": self.counts.pending_members_learned,
                    "held_events": self.counts.held,
                }
                if self.mid_stream
                else None
            ),
            "max_hypotheses": self.counts.max_hypotheses,
            "cut_at_line": self.cut_at_line,
            "elapsed_s": round(self.elapsed_s, 3),
            "divergence": self.divergence.to_json() if self.divergence else None,
            "excerpt": list(self.excerpt),
            "divergence_groups": [g.to_json() for g in self.groups],
            "divergences": [d.to_json() for d in self.divergences],
            "profile": self.profile.to_json(),
            "tolerated": [
                {"name": name, "count": len(lines), "lines": lines}
                for name, lines in self.tolerated_by_name().items()
            ],
            "note": self.note,
            "rules_exercised": sorted(self.rules),
        }


def coordinator_config(
    header: TraceHeader, overrides: dict[str, Any], source: str
) -> CoordinatorConfig:
    """The broker settings to validate with: Kafka's defaults, the trace's, then `overrides`."""
    settings = {**header.coordinator, **overrides}
    names = coordinator_setting_names()
    unknown = sorted(set(settings) - names)
    if unknown:
        raise TraceInputError(
            f"{source}: unknown coordinator setting(s) {unknown}; known: {sorted(names)}"
        )
    try:
        return CoordinatorConfig(**settings)
    except (InvalidConfigError, TypeError) as error:
        raise TraceInputError(f"{source}: coordinator settings: {error}") from None


def validate_trace(
    path: Path | str,
    overrides: dict[str, Any] | None = None,
    settings: OracleSettings | None = None,
    shrink: bool = True,
    profile: DeviationProfile | None = None,
) -> Verdict:
    """Replay the trace at `path` against the specification, tolerating `profile`'s deviations.

    Raises `TraceInputError` for a trace that is not in the format (naming the line), or that
    cannot be read; a trace cut while being written validates up to the cut.
    """
    trace = Path(path)
    return validate_lines(
        lambda: _file_lines(trace), str(trace), overrides, settings, shrink, profile
    )


def _file_lines(path: Path) -> Iterator[str]:
    try:
        with path.open("rb") as handle:
            yield from text_lines(handle, str(path))
    except OSError as error:
        raise TraceInputError(f"{path}: cannot read: {error.strerror or error}") from None


def validate_lines(
    open_lines: Callable[[], Iterator[str]],
    source: str,
    overrides: dict[str, Any] | None = None,
    settings: OracleSettings | None = None,
    shrink: bool = True,
    profile: DeviationProfile | None = None,
) -> Verdict:
    """Replay a trace given as lines (`open_lines()` reads them afresh each call) against the
    specification; `source` names it in messages. See `validate_trace`."""
    reading = TraceReading()
    started = time.perf_counter()
    settings = settings or OracleSettings()
    events = parse_lines(open_lines(), source, reading)
    line = 1
    try:
        first = next(events, None)
        profile = profile or DeviationProfile()
        config = coordinator_config(
            reading.header, {**dict(profile.coordinator), **(overrides or {})}, source
        )
        oracle = Oracle(config, settings, profile)
        last_ts = None
        limit = settings.max_divergences
        note = ""
        for event in _chain(first, events):
            line += 1
            if limit and len(oracle.divergences) >= limit:
                oracle.counts.events += 1  # read, not judged
                continue
            oracle.observe(event, line)
            last_ts = event.ts_ms
        if limit and len(oracle.divergences) >= limit:
            note = f"stopped judging after {limit} divergences (--max-divergences)"
        else:
            oracle.finish(last_ts)
    except TraceFormatError as error:
        raise TraceInputError(str(error)) from None
    except ObservationError as error:
        raise TraceInputError(f"{source}:{line}: {error}") from None
    except TooAmbiguous as error:
        return Verdict(
            source,
            UNDECIDED,
            oracle.counts,
            tuple(oracle.divergences),
            (),
            reading.cut_at_line,
            time.perf_counter() - started,
            str(error),
            tuple(oracle.tolerated),
            oracle.profile,
            oracle.rules_exercised,
            settings.mid_stream,
            config.kafka_version,
        )
    try:
        groups = _groups(
            open_lines,
            source,
            oracle.divergences,
            lambda: Oracle(config, settings, profile),
            shrink,
        )
    except TraceFormatError as error:
        raise TraceInputError(str(error)) from None
    status = DIVERGED if oracle.divergences else PASS
    return Verdict(
        source,
        status,
        oracle.counts,
        tuple(oracle.divergences),
        groups,
        reading.cut_at_line,
        time.perf_counter() - started,
        note,
        tuple(oracle.tolerated),
        profile,
        oracle.rules_exercised,
        settings.mid_stream,
        config.kafka_version,
    )


def _chain(first: TraceEvent | None, rest: Iterable[TraceEvent]) -> Iterable[TraceEvent]:
    if first is None:
        return
    yield first
    yield from rest


# -- the excerpts ---------------------------------------------------------------------------


def _groups(
    open_lines: Callable[[], Iterator[str]],
    source: str,
    divergences: Sequence[Divergence],
    make_oracle: Callable[[], Oracle],
    shrink: bool,
) -> tuple[DivergenceGroup, ...]:
    """The divergences grouped by kind, in order of first occurrence, each with the excerpt
    leading to its first (the shrinking budget shared between the groups)."""
    by_kind: dict[tuple[str, str, str, str], list[Divergence]] = {}
    for divergence in divergences:
        by_kind.setdefault(divergence.group_key, []).append(divergence)
    budget = max(SHRINK_BUDGET // max(len(by_kind), 1), SHRINK_BUDGET // 8)
    groups = []
    for members in by_kind.values():
        first = members[0]
        # A missing or late answer is not reproduced by a shorter excerpt: shown unshrunk.
        shrinkable = shrink and first.kind not in (UNANSWERED, LATE)
        excerpt = _excerpt(open_lines, source, first, make_oracle, shrinkable, budget)
        groups.append(DivergenceGroup(first, tuple(d.line for d in members), excerpt))
    return tuple(groups)


def _excerpt(
    open_lines: Callable[[], Iterator[str]],
    source: str,
    divergence: Divergence,
    make_oracle: Callable[[], Oracle],
    shrink: bool,
    budget: int = SHRINK_BUDGET,
) -> tuple[str, ...]:
    """The trace lines up to the divergence that touch its group, shrunk while it still diverges."""
    lines: list[tuple[int, TraceEvent]] = []
    reading = TraceReading()
    for number, event in enumerate(parse_lines(open_lines(), source, reading), start=2):
        if number > divergence.line:
            break
        lines.append((number, event))
    target = next(e for n, e in lines if n == divergence.line)
    groups = _groups_of_connection(lines, target.connection, divergence.line)
    chosen = _paired([(n, e) for n, e in lines if _touches(e, groups)], divergence)
    if shrink:
        chosen = _shrink(chosen, divergence, make_oracle, budget)
    return tuple(json.dumps({"line": n, **e.to_json()}, separators=(",", ":")) for n, e in chosen)


def _groups_of_connection(
    lines: Sequence[tuple[int, TraceEvent]], connection: str, line: int
) -> frozenset[str]:
    request = None
    target = next(e for n, e in lines if n == line)
    for _, event in lines:
        if event.direction == REQUEST and (event.connection, event.correlation_id) == (
            connection,
            target.correlation_id,
        ):
            request = event
    return _event_groups(request) if request is not None else frozenset()


def _event_groups(event: TraceEvent) -> frozenset[str]:
    body = event.body or {}
    found = set()
    for name in ("group_id", "key"):
        if isinstance(body.get(name), str):
            found.add(body[name])
    for name in ("groups", "groups_names", "coordinator_keys"):
        for item in body.get(name) or ():
            if isinstance(item, str):
                found.add(item)
            elif isinstance(item, dict) and isinstance(item.get("group_id"), str):
                found.add(item["group_id"])
    return frozenset(found)


def _touches(event: TraceEvent, groups: frozenset[str]) -> bool:
    if event.direction == REQUEST:
        return bool(_event_groups(event) & groups) or not _event_groups(event)
    return True


def _shrink(
    chosen: list[tuple[int, TraceEvent]],
    divergence: Divergence,
    make_oracle: Callable[[], Oracle],
    budget: int,
) -> list[tuple[int, TraceEvent]]:
    """Drop request/response pairs while the excerpt still diverges at the same response:
    chunks of pairs first, then smaller ones (delta debugging), within a budget of replays."""
    current = chosen
    size = max(1, len(_removable(current, divergence)) // 2)
    while budget > 0:
        removable = _removable(current, divergence)
        shrunk = False
        for start in range(0, len(removable), size):
            if budget == 0:
                break
            drop = set(removable[start : start + size])
            candidate = [
                (n, e)
                for n, e in current
                if (e.connection, e.correlation_id, e.direction == "close") not in drop
            ]
            budget -= 1
            if _diverges_at(candidate, divergence, make_oracle):
                current, shrunk = candidate, True
                break
        if not shrunk:
            if size == 1:
                break
            size = max(1, size // 2)
    return current


def _removable(
    current: list[tuple[int, TraceEvent]], divergence: Divergence
) -> list[tuple[str, int, bool]]:
    """The request/response pairs an excerpt may lose: all but the divergent one."""
    target = next(e for n, e in current if n == divergence.line)
    return [
        (e.connection, e.correlation_id, False)
        for _, e in current
        if e.direction == REQUEST
        and (e.connection, e.correlation_id) != (target.connection, target.correlation_id)
    ]


def _paired(
    chosen: list[tuple[int, TraceEvent]], divergence: Divergence
) -> list[tuple[int, TraceEvent]]:
    """Requests with their responses, and responses only with their requests."""
    requested = {(e.connection, e.correlation_id) for _, e in chosen if e.direction == REQUEST}
    return [
        (n, e)
        for n, e in chosen
        if e.direction != RESPONSE or (e.connection, e.correlation_id) in requested
    ]


def _diverges_at(
    candidate: list[tuple[int, TraceEvent]],
    divergence: Divergence,
    make_oracle: Callable[[], Oracle],
) -> bool:
    oracle = make_oracle()
    try:
        for number, event in candidate:
            oracle.observe(event, number)
    except (ObservationError, TooAmbiguous):
        return False
    return any(
        (found.line, found.reason, found.allowed)
        == (divergence.line, divergence.reason, divergence.allowed)
        for found in oracle.divergences
    )
