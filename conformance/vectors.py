"""Portable conformance vectors: write them, read them, and run an implementation against them.

A vector file (`PRESET.jsonl`, format "groupspec-conformance-vectors" version 2, documented in
docs/vectors.md) holds a preset's run tree (see `coordinator_runs`): a header line, then one
line per node with the input that leads to it from its parent, every outcome the
specification allows there, and the armed timers and groups after the outcome taken. Each
root-to-leaf path is one vector: feed its inputs to a fresh coordinator and, after each, its
responses must be those of one allowed outcome, and its timers and groups those recorded
(when the adapter can show them; version-1 files carry responses only). A node whose step
happens later than time 0 says when (`now_ms`; only a retention check after an idle period moves
the clock), and the runner moves the adapter's clock there first (`set_time`).

Member ids are the coordinator's to choose, so a runner binds them: the first time a response
shows an id the vector has not seen, the implementation's id is bound to the vector's, and
inputs are translated through that binding from then on. Where the specification allows several
outcomes (a leader, a protocol), each step names the one the vector continues from as `choices`,
handed to the implementation as hints; an implementation that ignores them and picks another
allowed outcome has not failed, but the rest of that path is skipped (`diverged`).
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO, cast

from groupspec.models.world_params import coordinator_config
from groupspec.models.world_state import CLOSED_REF
from groupspec.spec import GroupCoordinatorSpec
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.events import HeartbeatExpired, JoinTimerExpired, SyncTimerExpired, TimerEvent
from groupspec.spec.state import CoordinatorState
from groupspec.spec.step import Choice, Outcome
from groupspec.vocabulary.errors import InvalidConfigError
from groupspec.vocabulary.responses import Response
from groupspec.wire.json_lines import JsonInputError, LineDecodeError, decoded_lines, loads_strict

from .coordinator_runs import (
    ConnectionClosed,
    CoordinatorInput,
    CoordinatorRuns,
    CoordinatorStep,
    apply_connection_closed,
)
from .vector_codec import VectorDecodeError, decode, encode
from .vector_state import (
    GroupProjection,
    compared_timers,
    projection_difference,
    rename_projection,
    rename_timer,
    sorted_timers,
    spec_armed_timers,
    spec_group_projection,
    spec_group_projections,
)

FORMAT = "groupspec-conformance-vectors"
# Version 2 adds each node's armed timers and group projections; version 1 still reads and runs
# (responses only, and the report says the rest was not checked).
VERSION = 2
READABLE_VERSIONS = (1, 2)
TIMER_EVENT_TYPES = (HeartbeatExpired, JoinTimerExpired, SyncTimerExpired)
# Response fields that carry coordinator-chosen member ids, bound rather than compared.
ID_FIELDS = frozenset({"member_id", "leader"})
# The input field naming a group (a group enters memory only through a request naming it).
_GROUP_ID_FIELDS = frozenset({"group_id"})
# Lists whose order Kafka leaves open (hash-map iteration), compared as multisets.
UNORDERED_LISTS = frozenset(
    {
        ("JoinGroupResponse", "members"),
        ("OffsetFetchResponse", "partitions"),
        ("DescribedGroup", "members"),
        ("ListGroupsResponse", "groups"),
    }
)


class VectorFileError(Exception):
    """A vector file that cannot be read; the message names the file and line."""


# -- writing ------------------------------------------------------------------------------------


def write_vectors(runs: CoordinatorRuns, path: Path) -> None:
    """Write `runs` as a vector file at `path` (replaced atomically; gzip-compressed when the
    name ends in .gz)."""
    leaves = set(runs.leaves)
    header = {
        "format": FORMAT,
        "version": VERSION,
        "preset": runs.preset,
        "config": encode(coordinator_config(runs.parameters)),
        "initial_unowned_partitions": [],
        "now_ms": 0,
        "nodes": len(runs.nodes),
        "vectors": len(runs.leaves),
        "transitions": runs.coordinator_transitions,
        "world_states": runs.world_states,
    }

    def lines() -> Iterator[dict[str, Any]]:
        for number, node in enumerate(runs.nodes[1:], start=1):
            assert node.step is not None  # only the root has no step
            yield _node_document(number, node.parent, node.first, number in leaves, node.step)

    _write_file(path, header, lines())


def _node_document(
    number: int, parent: int, first: bool, leaf: bool, step: CoordinatorStep
) -> dict[str, Any]:
    """The JSON line of one node: its input, every allowed outcome, the one taken, and the
    coordinator's armed timers and groups after the taken one (version 2)."""
    after = step.outcome.state
    extras: dict[str, Any] = {"now_ms": step.now_ms} if step.now_ms else {}
    if step.config is not None:
        extras["config"] = encode(step.config)
    return {
        "node": number,
        "parent": parent,
        "first": first,
        "leaf": leaf,
        **extras,
        "input": encode(step.input),
        "taken": step.taken,
        "outcomes": [
            {
                "responses": [encode(response) for response in outcome.responses],
                "choices": [[c.what, c.value] for c in outcome.choices],
                "rules": list(outcome.rules),
            }
            for outcome in step.outcomes
        ],
        "timers": encode(spec_armed_timers(after)),
        "groups": encode(spec_group_projections(after)),
    }


def _write_file(path: Path, header: dict[str, Any], lines: Iterable[dict[str, Any]]) -> None:
    """Write a header and node lines to `path` through a temporary file, so a failure midway
    leaves any earlier file at `path` intact."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with _open_for_writing(temporary, compressed=path.suffix == ".gz") as out:
            out.write(json.dumps(header, sort_keys=True) + "\n")
            for line in lines:
                out.write(json.dumps(line, sort_keys=True) + "\n")
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    temporary.replace(path)


def upgrade_vectors(path: Path) -> VectorFile:
    """Rewrite the vector file at `path` as version 2, in place: replay its tree on the
    specification, following each node's `taken` outcome, and record the timers and groups
    after it; the header's config is written with every setting spelt out. Refuses
    (VectorFileError, the file untouched) unless the replay reproduces every recorded input and
    outcome exactly. Returns the file as rewritten."""
    vectors = read_vectors(path)
    specs = {vectors.config: GroupCoordinatorSpec(vectors.config)}
    states: list[CoordinatorState] = [specs[vectors.config].initial_state()]
    lines: list[dict[str, Any]] = []
    for step in vectors.steps[1:]:
        assert step is not None
        before = states[step.parent]
        if isinstance(step.input, ConnectionClosed):
            outcomes: tuple[Outcome, ...] = (
                Outcome(apply_connection_closed(before, step.input), (), (), ()),
            )
        else:
            config = step.config or vectors.config
            spec = specs.setdefault(config, GroupCoordinatorSpec(config))
            outcomes = tuple(spec.step(before, step.input, step.now_ms))
        replayed = CoordinatorStep(
            step.input, outcomes, min(step.taken, len(outcomes) - 1), step.now_ms, step.config
        )
        line = _node_document(step.node, step.parent, step.first, step.leaf, replayed)
        if line["input"] != step.input_json or line["outcomes"] != list(step.outcomes):
            raise VectorFileError(
                f"{path}:{step.node + 1}: the specification no longer allows exactly the recorded"
                " outcomes; regenerate the file with `groupspec vectors --out`"
            )
        states.append(replayed.outcome.state)
        lines.append(line)
    # The config is written afresh, so it names every setting the specification now has.
    header = {**vectors.header, "version": VERSION, "config": encode(vectors.config)}
    _write_file(path, header, lines)
    return read_vectors(path)


# -- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VectorStep:
    """One node of a vector file: its input, every allowed outcome, and the one taken."""

    node: int
    parent: int
    first: bool
    leaf: bool
    input: CoordinatorInput
    input_json: Any
    outcomes: tuple[Any, ...]  # JSON: {"responses": [...], "choices": [[what, value]], "rules"}
    taken: int
    # After the taken outcome (version 2; None in a version-1 file): the compared armed timers
    # and every group in memory, in the vector's member ids.
    timers: frozenset[TimerEvent] | None = None
    groups: tuple[GroupProjection, ...] | None = None
    # When the step happens (the coordinator's clock; 0 unless an idle period passed before).
    now_ms: int = 0
    # The configuration of the coordinator that takes the step, when not the file's (after a
    # failover to a coordinator configured otherwise).
    config: CoordinatorConfig | None = None

    @property
    def hints(self) -> tuple[Choice, ...]:
        """The choices of the outcome the vector continues from."""
        return tuple(Choice(what, value) for what, value in self.outcomes[self.taken]["choices"])


@dataclass(frozen=True)
class VectorFile:
    """A whole vector file: the header and every node (index 0 is the initial coordinator)."""

    path: Path
    header: dict[str, Any]
    config: CoordinatorConfig
    steps: tuple[VectorStep | None, ...]

    def leaves(self) -> Iterator[int]:
        """The nodes that end a vector."""
        return (step.node for step in self.steps[1:] if step is not None and step.leaf)

    def steps_to(self, node: int) -> list[VectorStep]:
        """The steps from the initial coordinator to `node`."""
        found: list[VectorStep] = []
        while node:
            step = self.steps[node]
            assert step is not None
            found.append(step)
            node = step.parent
        found.reverse()
        return found


def read_vectors(path: Path) -> VectorFile:
    """Read and validate a vector file; errors name the file and line."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as source:
            lines = [line.rstrip("\r\n") for line in decoded_lines(source)]
    except LineDecodeError as error:
        raise VectorFileError(f"{path}:{error.line}: {error.problem}") from None
    except OSError as error:
        # gzip's BadGzipFile is an OSError too
        raise VectorFileError(f"{path}: unreadable: {error.strerror or error}") from None
    except (EOFError, zlib.error) as error:
        raise VectorFileError(f"{path}: unreadable ({error})") from None
    if not lines:
        raise VectorFileError(f"{path}: empty file")
    header = _json(path, 1, lines[0])
    if header.get("format") != FORMAT:
        raise VectorFileError(f"{path}:1: not a {FORMAT} file")
    version = header.get("version")
    if version not in READABLE_VERSIONS:
        raise VectorFileError(
            f"{path}:1: version {version!r}, expected one of {list(READABLE_VERSIONS)}"
        )
    try:
        config = decode(header["config"], "config")
    except (KeyError, VectorDecodeError) as error:
        raise VectorFileError(f"{path}:1: bad config: {error}") from None
    steps: list[VectorStep | None] = [None]
    for number, text in enumerate(lines[1:], start=2):
        line = _json(path, number, text)
        try:
            node, parent = line["node"], line["parent"]
            if node != len(steps) or not 0 <= parent < node:
                raise VectorFileError(f"{path}:{number}: nodes must be numbered in order")
            outcomes = tuple(line["outcomes"])
            taken = line["taken"]
            if not 0 <= taken < len(outcomes):
                raise VectorFileError(f"{path}:{number}: taken {taken} is not an outcome")
            timers, groups = _coordinator_after(line) if version >= 2 else (None, None)
            now_ms = line.get("now_ms", 0)
            if type(now_ms) is not int or not 0 <= now_ms < 2**63:
                raise VectorFileError(f"{path}:{number}: now_ms must be a time in ms")
            step_config = decode(line["config"], "config") if "config" in line else None
            if step_config is not None and not isinstance(step_config, CoordinatorConfig):
                raise VectorFileError(f"{path}:{number}: config is not a coordinator config")
            steps.append(
                VectorStep(
                    node,
                    parent,
                    bool(line["first"]),
                    bool(line["leaf"]),
                    decode(line["input"], "input"),
                    line["input"],
                    outcomes,
                    taken,
                    timers,
                    groups,
                    now_ms,
                    step_config,
                )
            )
        except KeyError as error:
            raise VectorFileError(f"{path}:{number}: missing field {error}") from None
        except (VectorDecodeError, TypeError) as error:
            raise VectorFileError(f"{path}:{number}: {error}") from None
    return VectorFile(path, header, config, tuple(steps))


def _coordinator_after(
    line: dict[str, Any],
) -> tuple[frozenset[TimerEvent], tuple[GroupProjection, ...]]:
    """A version-2 node's timers and groups, decoded (raises VectorDecodeError if malformed)."""
    timers = [decode(event, f"timers[{i}]") for i, event in enumerate(line["timers"])]
    groups = [decode(group, f"groups[{i}]") for i, group in enumerate(line["groups"])]
    if not all(isinstance(event, TIMER_EVENT_TYPES) for event in timers):
        raise VectorDecodeError("timers: expected timer events")
    if not all(isinstance(group, GroupProjection) for group in groups):
        raise VectorDecodeError("groups: expected GroupProjection objects")
    return frozenset(timers), tuple(groups)


def _open_for_writing(path: Path, compressed: bool) -> TextIO:
    if compressed:
        # mtime=0 keeps the compressed bytes reproducible, so committed files only change with
        # their content.
        raw = gzip.GzipFile(path, "wb", compresslevel=9, mtime=0)
        return io.TextIOWrapper(raw, encoding="utf-8")
    return path.open("w", encoding="utf-8")


def _json(path: Path, number: int, text: str) -> dict[str, Any]:
    try:
        value = loads_strict(text)
    except JsonInputError as error:
        raise VectorFileError(f"{path}:{number}: {error.problem}") from None
    if not isinstance(value, dict):
        raise VectorFileError(f"{path}:{number}: expected a JSON object")
    return value


# -- running ------------------------------------------------------------------------------------


class CoordinatorAdapter(Protocol):
    """What a Python implementation provides to be run against the vectors."""

    def reset(self, config: CoordinatorConfig) -> None:
        """Start again from a fresh coordinator with `config` that leads every partition;
        InvalidConfigError for a configuration it cannot take (a Kafka version profile it does
        not follow): the file is then refused, not run."""
        ...

    def apply(self, event: CoordinatorInput, hints: tuple[Choice, ...]) -> Sequence[Response]:
        """Take one input (a request, a timer firing, a change of partition ownership, or a
        connection closing) and return the responses it sends now, parked ones included.
        `hints` name the outcome the vector continues from where the spec allows several."""
        ...

    def member_ids(self, group_id: str) -> Sequence[str]:
        """The group's member ids, pending members included, in the order they were created.

        A timer may name a member no response has shown yet (a static member whose JoinGroup
        is parked); the runner binds such ids to the implementation's in creation order."""
        ...


class CoordinatorStateAdapter(CoordinatorAdapter, Protocol):
    """An adapter that also shows the coordinator's timers and groups, so the runner checks
    them after every step of a version-2 file (without these methods it checks responses only
    and says so in its report)."""

    def armed_timers(self) -> Iterable[TimerEvent]:
        """Every timer the coordinator has armed now, as spec timer events with the
        implementation's member ids (an OffsetRetentionCheck among them is ignored)."""
        ...

    def group_projection(self, group_id: str) -> GroupProjection | None:
        """The group's projection with the implementation's member ids (None: no such group
        in memory)."""
        ...


STATE_METHODS = ("armed_timers", "group_projection")


class TimedAdapter(CoordinatorAdapter, Protocol):
    """An adapter whose clock the runner can move: needed by a file with a step later than
    time 0 (a retention check after the group lay idle)."""

    def set_time(self, now_ms: int) -> None:
        """Move the coordinator's clock forward to `now_ms` (it never goes backwards)."""
        ...


class ReconfigurableAdapter(CoordinatorAdapter, Protocol):
    """An adapter whose coordinator can take a new configuration: needed by a file in which a
    coordinator configured otherwise takes over after a failover."""

    def reconfigure(self, config: CoordinatorConfig) -> None:
        """Serve every later input with `config`, keeping the coordinator's state and log."""
        ...


class SpecAdapter:
    """The specification itself behind the adapter interface: it follows the hints exactly,
    so it must pass every vector (a check of the vectors, and the reference runner)."""

    def __init__(self) -> None:
        self._spec = GroupCoordinatorSpec()
        self._state: CoordinatorState = self._spec.initial_state()
        self._now_ms = 0

    def reset(self, config: CoordinatorConfig) -> None:
        """A fresh specification coordinator."""
        self._spec = GroupCoordinatorSpec(config)
        self._state = self._spec.initial_state()
        self._now_ms = 0

    def set_time(self, now_ms: int) -> None:
        """Later steps happen at `now_ms`."""
        self._now_ms = now_ms

    def reconfigure(self, config: CoordinatorConfig) -> None:
        """Later steps are taken by a specification coordinator with `config`."""
        self._spec = GroupCoordinatorSpec(config)

    def apply(self, event: CoordinatorInput, hints: tuple[Choice, ...]) -> Sequence[Response]:
        """The outcome the hints name (the first allowed one without hints)."""
        if isinstance(event, ConnectionClosed):
            self._state = apply_connection_closed(self._state, event)
            return ()
        outcomes = self._spec.step(self._state, event, self._now_ms)
        chosen = next((o for o in outcomes if o.choices == hints), outcomes[0])
        self._state = chosen.state
        return chosen.responses

    def member_ids(self, group_id: str) -> Sequence[str]:
        """Members and pending members, by the number in their id (the spec counts up)."""
        group = self._state.group(group_id)
        if group is None:
            return ()
        ids = {m.member_id for m in group.members} | {p.member_id for p in group.pending_members}
        return sorted(ids, key=_creation_order)

    def armed_timers(self) -> Iterable[TimerEvent]:
        """The timers the specification has armed in the current state."""
        return spec_armed_timers(self._state)

    def group_projection(self, group_id: str) -> GroupProjection | None:
        """The group's projection in the current state."""
        return spec_group_projection(self._state, group_id)


def _creation_order(member_id: str) -> tuple[int, str]:
    prefix, _, number = member_id.rpartition("-")
    return (int(number), prefix) if number.isdigit() else (-1, member_id)


@dataclass(frozen=True)
class VectorFailure:
    """A step where the implementation's responses match no allowed outcome."""

    node: int
    step: int
    inputs: tuple[Any, ...]
    expected: tuple[Any, ...]
    actual: Any
    detail: str


@dataclass
class VectorReport:
    """What running one vector file found."""

    preset: str
    vectors: int = 0
    steps: int = 0
    transitions: int = 0
    covered: set[int] = field(default_factory=set)
    diverged: int = 0
    failures: list[VectorFailure] = field(default_factory=list)
    # Why the timers and group projections were not checked (None: checked after every step).
    state_not_checked: str | None = None
    # Why the adapter refused the file's configuration (None: it took it); nothing was run.
    refused: str | None = None

    @property
    def covered_transitions(self) -> int:
        """Distinct coordinator transitions replayed and matched."""
        return len(self.covered)

    @property
    def passed(self) -> bool:
        """Run, with no failure and every transition covered."""
        return (
            self.refused is None
            and not self.failures
            and self.covered_transitions == self.transitions
        )


def run_vectors(
    vectors: VectorFile,
    adapter: CoordinatorAdapter,
    max_failures: int = 10,
    progress: Callable[[int], None] | None = None,
) -> VectorReport:
    """Replay every vector of `vectors` on `adapter` and judge each step."""
    report = VectorReport(str(vectors.header.get("preset", vectors.path.stem)))
    report.transitions = int(vectors.header.get("transitions", 0))
    missing = [name for name in STATE_METHODS if not callable(getattr(adapter, name, None))]
    if vectors.header.get("version") == 1:
        report.state_not_checked = "a version-1 file records no timers or group states"
    elif missing:
        report.state_not_checked = f"the adapter has no {' or '.join(missing)}"
    for config in _configs(vectors):
        try:
            adapter.reset(config)
        except InvalidConfigError as error:
            report.refused = str(error)
            return report
    for count, leaf in enumerate(vectors.leaves(), start=1):
        report.vectors += 1
        _run_path(vectors, adapter, vectors.steps_to(leaf), report)
        if len(report.failures) >= max_failures:
            break
        if progress is not None:
            progress(count)
    return report


def _configs(vectors: VectorFile) -> list[CoordinatorConfig]:
    """Every coordinator configuration the file's steps are taken with: its own, then those of
    steps taken by a coordinator configured otherwise."""
    configs = [vectors.config]
    for step in vectors.steps:
        if step is not None and step.config is not None and step.config not in configs:
            configs.append(step.config)
    return configs


def _run_path(
    vectors: VectorFile, adapter: CoordinatorAdapter, path: list[VectorStep], report: VectorReport
) -> None:
    adapter.reset(vectors.config)
    binding = _Binding()
    closed: set[str] = set()
    named_groups: set[str] = set()
    now_ms, config = 0, vectors.config
    for index, step in enumerate(path):
        report.steps += 1
        wanted = step.config or vectors.config
        changes: list[tuple[str, object, str]] = []
        if wanted != config:
            changes.append(
                ("reconfigure", wanted, "step is taken by a coordinator configured otherwise")
            )
        if step.now_ms != now_ms:
            changes.append(("set_time", step.now_ms, "step happens later"))
        for method, value, why in changes:
            call = getattr(adapter, method, None)
            if not callable(call):
                _fail(report, path, index, None, f"{why}: the adapter has no {method}")
                return
            call(value)
        config, now_ms = wanted, step.now_ms
        named_groups.update(_string_values(step.input_json, _GROUP_ID_FIELDS))
        binding.bind_unseen(step.input_json, adapter)
        binding.bind_hinted(step.hints, step.input_json, adapter)
        event = binding.to_implementation(step.input)
        hints = tuple(
            Choice(hint.what, binding.forward.get(hint.value, hint.value)) for hint in step.hints
        )
        try:
            actual = [encode(r) for r in adapter.apply(event, hints)]
        except Exception as error:  # any exception is the implementation's failure
            _fail(
                report, path, index, None, f"implementation raised {type(error).__name__}: {error}"
            )
            return
        if isinstance(step.input, ConnectionClosed):
            closed.add(step.input.connection)
        observed = _by_ref(actual, closed)
        matched = None
        # The hinted outcome first: outcomes may differ only in state (a leader chosen but not
        # yet announced), and then the responses cannot tell them apart.
        order = [step.taken, *(n for n in range(len(step.outcomes)) if n != step.taken)]
        for number in order:
            expected = _by_ref(step.outcomes[number]["responses"], closed)
            if binding.unify(expected, observed):
                matched = number
                break
        if matched is None:
            _fail(
                report,
                path,
                index,
                actual,
                f"responses match none of the {len(step.outcomes)} allowed outcomes",
            )
            return
        if matched != step.taken:
            report.diverged += 1
            return
        if report.state_not_checked is None:
            difference = _state_difference(
                step, cast(CoordinatorStateAdapter, adapter), binding, named_groups
            )
            if difference:
                _fail(report, path, index, actual, f"responses match, but {difference}")
                return
        if step.first:
            report.covered.add(step.node)


def _fail(report: VectorReport, path: list[VectorStep], index: int, actual: Any, what: str) -> None:
    """Record a failure at step `index` of `path`, described as "the " + `what`."""
    step = path[index]
    report.failures.append(
        VectorFailure(
            step.node,
            index + 1,
            tuple(s.input_json for s in path[: index + 1]),
            tuple(o["responses"] for o in step.outcomes),
            actual,
            f"{report.preset} node {step.node}, step {index + 1} of its vector: the {what}",
        )
    )


def _state_difference(
    step: VectorStep,
    adapter: CoordinatorStateAdapter,
    binding: _Binding,
    named_groups: set[str],
) -> str:
    """How the implementation's armed timers and groups differ from those the step records,
    compared in the vector's member ids (empty when they agree)."""
    assert step.timers is not None and step.groups is not None
    expected_groups = {projection.group_id: projection for projection in step.groups}
    # Ids no response has shown (a parked static member) are bound as inputs' ids are.
    unseen: dict[str, list[dict[str, str]]] = {}
    for event in step.timers:
        if isinstance(event, HeartbeatExpired):
            unseen.setdefault(event.group_id, []).append({"member_id": event.member_id})
    for projection in step.groups:
        for member_id in (*projection.members, *projection.pending_members):
            unseen.setdefault(projection.group_id, []).append({"member_id": member_id})
    for group_id, ids in unseen.items():
        binding.bind_unseen({"group_id": group_id, "members": ids}, adapter)
    actual_timers = {
        rename_timer(event, binding.backward) for event in compared_timers(adapter.armed_timers())
    }
    missing = sorted_timers(step.timers - actual_timers)
    unexpected = sorted_timers(actual_timers - step.timers)
    if missing or unexpected:
        return "the armed timers differ: " + "; ".join(
            f"{what} {', '.join(map(repr, events))}"
            for what, events in (("missing", missing), ("unexpected", unexpected))
            if events
        )
    for group_id in sorted(named_groups | expected_groups.keys()):
        found = adapter.group_projection(group_id)
        actual = rename_projection(found, binding.backward) if found is not None else None
        difference = projection_difference(expected_groups.get(group_id), actual)
        if difference:
            return f"group {group_id!r} differs: {difference}"
    return ""


def _by_ref(responses: list[Any], closed: set[str]) -> dict[str, Any]:
    """Responses keyed by where they go, without those addressed to closed connections."""
    found: dict[str, Any] = {}
    for response in responses:
        ref = response["ref"]
        connection = ref["connection"]
        if connection in closed or connection == CLOSED_REF.connection:
            continue
        found[f"{connection}#{ref['correlation_id']}"] = response["body"]
    return found


# The spec's choices whose value is a member id (spec/rebalance.py).
_MEMBER_ID_CHOICES = frozenset({"leader", "leader after removal"})


class _Binding:
    """The bijection between the vector's member ids and the implementation's."""

    def __init__(self) -> None:
        self.forward: dict[str, str] = {}
        self.backward: dict[str, str] = {}

    def to_implementation(self, event: CoordinatorInput) -> CoordinatorInput:
        """`event` with the vector's member ids replaced by the implementation's."""
        if not self.forward or all(a == b for a, b in self.forward.items()):
            return event
        document = _rename(encode(event), self.forward)
        return decode(document, "input")

    def bind_unseen(self, document: Any, adapter: CoordinatorAdapter) -> None:
        """Bind member ids an input names before any response showed them, to the
        implementation's unbound members of the same group, both in creation order."""
        unseen = sorted(
            {i for i in _string_values(document, ID_FIELDS) if i and i not in self.forward},
            key=_creation_order,
        )
        group_id = document.get("group_id") or document.get("request", {}).get("group_id")
        if not unseen or not isinstance(group_id, str):
            return
        free = [i for i in adapter.member_ids(group_id) if i not in self.backward]
        for spec_id in unseen:
            # Kafka spells a member id `<group.instance.id or client.id>-<unique>`: prefer an
            # unbound id with the same prefix, so a static member binds to its own instance.
            prefix = spec_id.rpartition("-")[0] + "-"
            same = [i for i in free if i.startswith(prefix)]
            if not (same or free):
                return
            impl_id = (same or free)[0]
            free.remove(impl_id)
            self.forward[spec_id], self.backward[impl_id] = impl_id, spec_id

    def bind_hinted(
        self, hints: tuple[Choice, ...], document: Any, adapter: CoordinatorAdapter
    ) -> None:
        """Bind member ids a hint names (a leader chosen among members) that no response has
        shown yet, such as a static member whose JoinGroup is still parked, as `bind_unseen`
        binds those of an input."""
        group_id = document.get("group_id") or document.get("request", {}).get("group_id")
        for hint in hints:
            if hint.what in _MEMBER_ID_CHOICES and hint.value not in self.forward:
                self.bind_unseen({"group_id": group_id, "member_id": hint.value}, adapter)

    def unify(self, expected: Any, actual: Any) -> bool:
        """Whether `actual` equals `expected` up to the binding, extended by new member ids
        (kept only when the whole comparison succeeds)."""
        trial = _Binding()
        trial.forward, trial.backward = dict(self.forward), dict(self.backward)
        if not trial._same(expected, actual, None):
            return False
        self.forward, self.backward = trial.forward, trial.backward
        return True

    def _same(self, expected: Any, actual: Any, key: str | None, owner: Any = None) -> bool:
        if isinstance(expected, dict):
            return (
                isinstance(actual, dict)
                and expected.keys() == actual.keys()
                and all(
                    self._same(expected[k], actual[k], k, expected.get("type")) for k in expected
                )
            )
        if isinstance(expected, list):
            if not isinstance(actual, list) or len(expected) != len(actual):
                return False
            if (owner, key) in UNORDERED_LISTS:
                return self._same_multiset(expected, actual, key)
            return all(self._same(e, a, key) for e, a in zip(expected, actual, strict=True))
        if key in ID_FIELDS and isinstance(expected, str) and isinstance(actual, str) and expected:
            bound = self.forward.get(expected)
            if bound is not None:
                return bound == actual
            if actual in self.backward:
                return False
            self.forward[expected], self.backward[actual] = actual, expected
            return True
        return bool(expected == actual)

    def _same_multiset(self, expected: list[Any], actual: list[Any], key: str | None) -> bool:
        """Each expected item matched to a distinct actual item, binding as it goes (greedy:
        items of these lists differ in more than a member id, so the first match is the one)."""
        remaining = list(actual)
        for item in expected:
            for position, candidate in enumerate(remaining):
                trial = _Binding()
                trial.forward, trial.backward = dict(self.forward), dict(self.backward)
                if trial._same(item, candidate, key):
                    self.forward, self.backward = trial.forward, trial.backward
                    del remaining[position]
                    break
            else:
                return False
        return True


def _string_values(document: Any, keys: frozenset[str]) -> list[str]:
    """Every text value of a field named in `keys`, anywhere in a JSON document."""
    found: list[str] = []
    if isinstance(document, dict):
        for k, v in document.items():
            if k in keys and isinstance(v, str):
                found.append(v)
            else:
                found.extend(_string_values(v, keys))
    elif isinstance(document, list):
        for item in document:
            found.extend(_string_values(item, keys))
    return found


def _rename(document: Any, mapping: dict[str, str]) -> Any:
    if isinstance(document, dict):
        return {
            k: (mapping.get(v, v) if k in ID_FIELDS and isinstance(v, str) else _rename(v, mapping))
            for k, v in document.items()
        }
    if isinstance(document, list):
        return [_rename(item, mapping) for item in document]
    return document
