"""Validate a trace file against the specification: a verdict, every divergence grouped by kind
(the first of each shown with the shortest excerpt of the trace found that still leads to it),
and the share of events judged."""

from __future__ import annotations

import bisect
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
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

from .kip848 import ConsumerProtocolOracle, ConsumerSettingsError, consumer_group_config
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
from .shrink import (
    NOT_SHRUNK,
    CheckpointRecorder,
    Checkpoints,
    Known,
    ShrinkBudget,
    ShrinkOutcome,
    shrink_excerpt,
)
from .tracker import OracleSettings, TooAmbiguous

PASS = "pass"
DIVERGED = "diverged"
UNDECIDED = "undecided"
# The work shrinking a trace's excerpts may do, as a share of the work judging the trace took
# (both in specification steps, `Tracker.steps`): judging a divergent trace then costs about
# as much as judging a conforming one, not many times more (`groupspec bench oracle`
# measures it; docs/oracle.md, "Speed"). None: no limit, every excerpt shrunk until minimal.
SHRINK_EFFORT = 0.5


class TraceInputError(Exception):
    """A trace, or settings for it, that cannot be validated: names the file and line."""


@dataclass(frozen=True)
class DivergenceGroup:
    """Divergences of one kind (API, kind, field, rule): how many, where, the first in full,
    the shortest excerpt found leading to the first, and how far it was shrunk."""

    first: Divergence
    lines: tuple[int, ...]
    excerpt: tuple[str, ...]
    shrink: ShrinkOutcome = field(default_factory=ShrinkOutcome)

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
            "excerpt_shrink": self.shrink.to_json(),
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
    shrink_effort: float | None = SHRINK_EFFORT,
) -> Verdict:
    """Replay the trace at `path` against the specification, tolerating `profile`'s deviations.
    With `shrink`, each kind's excerpt is shrunk, all of them together taking at most
    `shrink_effort` times the specification steps judging the trace took (None: each until
    minimal).

    Raises `TraceInputError` for a trace that is not in the format (naming the line), or that
    cannot be read; a trace cut while being written validates up to the cut.
    """
    trace = Path(path)
    return validate_lines(
        lambda: _file_lines(trace),
        str(trace),
        overrides,
        settings,
        shrink,
        profile,
        shrink_effort,
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
    shrink_effort: float | None = SHRINK_EFFORT,
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
        # KIP-848's APIs go to the consumer-protocol oracle, everything else to the classic one.
        try:
            consumer = ConsumerProtocolOracle(
                consumer_group_config(_consumer_settings(reading.header.consumer_groups, config)),
                reorder_window_ms=settings.reorder_window_ms,
                classic_config=config,
            )
        except ConsumerSettingsError as error:
            raise TraceInputError(f"{source}:1: {error}") from None
        # Forks of the oracle along the way, for shrinking the excerpts from (`shrink`).
        recorder = CheckpointRecorder() if shrink else None
        last_ts = None
        limit = settings.max_divergences
        note = ""
        for event in _chain(first, events):
            line += 1
            if limit and len(oracle.divergences) >= limit:
                oracle.counts.events += 1  # read, not judged
                continue
            if consumer.judges(event):
                consumer.observe(event, line)
                last_ts = event.ts_ms
                continue
            if recorder is not None:
                recorder.before(line, oracle)
            oracle.observe(event, line)
            last_ts = event.ts_ms
        if limit and len(oracle.divergences) >= limit:
            note = f"stopped judging after {limit} divergences (--max-divergences)"
        else:
            oracle.finish(last_ts)
        consumer.finish()
        if consumer.ambiguous:
            note = "consumer-protocol hypotheses were cut at their limit (kip848.MAX_HYPOTHESES)"
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
    shrinking = None
    if recorder is not None:
        steps = None if shrink_effort is None else math.ceil(shrink_effort * oracle.tracker.steps)
        shrinking = _Shrinking(ShrinkBudget(steps), recorder.checkpoints())
    try:
        groups = _groups(
            open_lines,
            source,
            oracle.divergences,
            lambda: Oracle(config, settings, profile),
            shrinking,
        )
        # The consumer-protocol divergences' excerpts are not shrunk (no checkpoints of it).
        groups += _groups(
            open_lines,
            source,
            consumer.divergences,
            lambda: Oracle(config, settings, profile),
            None,
        )
    except TraceFormatError as error:
        raise TraceInputError(str(error)) from None
    divergences = sorted([*oracle.divergences, *consumer.divergences], key=lambda d: d.line)
    status = DIVERGED if divergences else PASS
    return Verdict(
        source,
        status,
        _merged_counts(oracle.counts, consumer.counts),
        tuple(divergences),
        groups,
        reading.cut_at_line,
        time.perf_counter() - started,
        note,
        tuple(oracle.tolerated),
        profile,
        oracle.rules_exercised | consumer.rules_exercised,
        settings.mid_stream,
        config.kafka_version,
    )


def _merged_counts(classic: OracleCounts, consumer: OracleCounts) -> OracleCounts:
    """The classic oracle's counts with the consumer-protocol oracle's added."""
    skipped = dict(classic.skipped_apis)
    for name, count in consumer.skipped_apis.items():
        skipped[name] = skipped.get(name, 0) + count
    return replace(
        classic,
        events=classic.events + consumer.events,
        judged=classic.judged + consumer.judged,
        requests=classic.requests + consumer.requests,
        responses_checked=classic.responses_checked + consumer.responses_checked,
        skipped=classic.skipped + consumer.skipped,
        max_hypotheses=max(classic.max_hypotheses, consumer.max_hypotheses),
        skipped_apis=skipped,
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
    shrinking: _Shrinking | None,
) -> tuple[DivergenceGroup, ...]:
    """The divergences grouped by kind, in order of first occurrence, each with the excerpt
    leading to its first, shrunk within an even share of what is left of the budget."""
    by_kind: dict[tuple[str, str, str, str], list[Divergence]] = {}
    for divergence in divergences:
        by_kind.setdefault(divergence.group_key, []).append(divergence)
    if not by_kind:
        return ()
    firsts = [members[0] for members in by_kind.values()]
    prefix = _Prefix(_prefix(open_lines, source, max(first.line for first in firsts)))
    excerpts = prefix.excerpts(firsts)
    texts: dict[int, str] = {}  # each line written once, however many excerpts show it
    groups = []
    for index, (members, excerpt) in enumerate(zip(by_kind.values(), excerpts, strict=True)):
        first = members[0]
        outcome = ShrinkOutcome()
        if shrinking is not None and first.kind in (UNANSWERED, LATE):
            outcome = ShrinkOutcome(
                NOT_SHRUNK, "a missing or late response is not reproduced by a shorter excerpt"
            )
        elif shrinking is not None:
            share = shrinking.budget.share(len(by_kind) - index)
            # The run that judged the trace has been over the whole of it up to the divergence
            # already: its checkpoints serve the excerpt of a trace of one group, which is all
            # of that, and any excerpt that does not diverge without the other groups.
            whole = prefix.events[: prefix.events_up_to(first.line)]
            judged = Known(shrinking.checkpoints.up_to(first.line), True)
            if len(excerpt) == len(whole):
                excerpt, outcome = shrink_excerpt(excerpt, first, make_oracle, share, judged)
            else:
                excerpt, outcome = shrink_excerpt(
                    excerpt, first, make_oracle, share, whole=(whole, judged)
                )
            shrinking.budget.take_back(share)
        text = tuple(_excerpt_line(n, e, texts) for n, e in excerpt)
        groups.append(DivergenceGroup(first, tuple(d.line for d in members), text, outcome))
    return tuple(groups)


def _excerpt_line(line: int, event: TraceEvent, written: dict[int, str]) -> str:
    """The event as a line of an excerpt: a trace line with its original number."""
    text = written.get(line)
    if text is None:
        document = {"line": line, **event.to_json()}
        text = written[line] = json.dumps(document, separators=(",", ":"))
    return text


@dataclass
class _Shrinking:
    """What shrinking the excerpts of one trace has: its budget, and the checkpoints of the
    run that judged the trace."""

    budget: ShrinkBudget
    checkpoints: Checkpoints


def _prefix(
    open_lines: Callable[[], Iterator[str]], source: str, last: int
) -> list[tuple[int, TraceEvent]]:
    """The trace's events up to line `last`, each with its line, read afresh."""
    found = []
    for number, event in enumerate(parse_lines(open_lines(), source, TraceReading()), start=2):
        if number > last:
            break
        found.append((number, event))
    return found


class _Prefix:
    """The start of a trace, from which the excerpts are cut: for a divergence, the events up
    to it of the groups its request names (requests naming no group too), each response with
    its request."""

    def __init__(self, events: list[tuple[int, TraceEvent]]) -> None:
        self.events = events
        self.numbers = [n for n, _ in events]
        # The groups each request names, and where each request was seen (by line).
        self.named = [
            _event_groups(e) if e.direction == REQUEST else frozenset() for _, e in events
        ]
        self.requests: dict[tuple[str, int], list[int]] = {}
        for number, event in events:
            if event.direction == REQUEST:
                self.requests.setdefault((event.connection, event.correlation_id), []).append(
                    number
                )

    def events_up_to(self, line: int) -> int:
        """How many events the trace has up to `line`."""
        return bisect.bisect_right(self.numbers, line)

    def excerpts(self, divergences: Sequence[Divergence]) -> list[list[tuple[int, TraceEvent]]]:
        """For each divergence, the events leading to it that touch its request's groups."""
        named = [self._groups_of(d) for d in divergences]
        last: dict[frozenset[str], int] = {}
        for groups, divergence in zip(named, divergences, strict=True):
            last[groups] = max(last.get(groups, 0), divergence.line)
        # Excerpts touching the same groups are cut from one list.
        touching = {groups: self._touching(groups, line) for groups, line in last.items()}
        lines = {groups: [n for n, _ in cut] for groups, cut in touching.items()}
        return [
            touching[groups][: bisect.bisect_right(lines[groups], divergence.line)]
            for groups, divergence in zip(named, divergences, strict=True)
        ]

    def _groups_of(self, divergence: Divergence) -> frozenset[str]:
        """The groups the divergent request names (none if it is not in the trace)."""
        seen = self.requests.get((divergence.connection, divergence.correlation_id), [])
        at = bisect.bisect_right(seen, divergence.line)
        if not at:
            return frozenset()
        return self.named[bisect.bisect_left(self.numbers, seen[at - 1])]

    def _touching(self, groups: frozenset[str], last: int) -> list[tuple[int, TraceEvent]]:
        """The events up to `last` touching `groups`: requests naming one of them or none, and
        responses to those."""
        found = []
        kept: set[tuple[str, int]] = set()
        for index in range(self.events_up_to(last)):
            number, event = self.events[index]
            if event.direction == REQUEST:
                named = self.named[index]
                if named & groups or not named:
                    kept.add((event.connection, event.correlation_id))
                    found.append((number, event))
            elif event.direction != RESPONSE or (event.connection, event.correlation_id) in kept:
                found.append((number, event))
        return found


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


def _consumer_settings(settings: dict[str, Any], config: CoordinatorConfig) -> dict[str, Any]:
    """The trace's consumer-protocol settings; a broker of the classic 3.x profile (the old
    Scala coordinator) serves no consumer protocol, whatever the header says of it."""
    if config.is_scala_coordinator and "consumer_protocol_enabled" not in settings:
        return {**settings, "consumer_protocol_enabled": False}
    return settings
