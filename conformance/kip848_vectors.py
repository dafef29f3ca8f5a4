"""Conformance vectors of the KIP-848 presets: export every coordinator transition a kip848
world explores, and replay them on the optimized coordinator (or on the specification).

Exploring a preset's world (models/kip848_world.py) steps the consumer-protocol coordinator
spec with heartbeats and timer firings; every distinct (coordinator state, input) pair met is
recorded with all the outcomes the spec allows there. From the initial coordinator state those
transitions form a tree (each coordinator state entered once, by the first path found): each
node is one input with every allowed outcome and the one the tree continues from (`taken`).
Each root-to-leaf path is one vector: feed its inputs to a fresh coordinator and, after each,
its responses and full state projection (conformance/kip848_differential.py) must be one of the
allowed outcomes. An implementation that takes another allowed outcome has not failed, but the
rest of that path is skipped and counted as `diverged`.

File format "groupspec-kip848-vectors" version 1 (JSON lines, optionally gzip): a header
with the preset, the coordinator settings and counts, then one line per node: `node`,
`parent` (0 is the root, the empty coordinator), `input` (tagged JSON, see `encode`),
`allowed` (a list of [responses, projection]) and `taken` (an index into `allowed`).
docs/vectors.md, "KIP-848 vectors", describes it.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import IO, Any, cast

from groupspec.impl.clock import ManualClock
from groupspec.impl.kip848 import ConsumerGroupCoordinator
from groupspec.impl.kip848.state import Partitions
from groupspec.models.kip848_world import Kip848World
from groupspec.spec.kip848 import (
    ConsumerGroupConfig,
    ConsumerGroupCoordinatorSpec,
    ConsumerGroupsState,
    Outcome,
    RebalanceTimeoutExpired,
    RequestArrived,
    SessionTimeoutExpired,
    TopicMetadata,
)
from groupspec.spec.kip848.events import ConsumerGroupInput
from groupspec.vocabulary import consumer_groups
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import RequestRef, TopicPartition
from groupspec.wire.json_lines import loads_strict

from .kip848_differential import (
    impl_config,
    impl_projection,
    impl_timer,
    spec_member_ids,
    spec_projection,
)

FORMAT = "groupspec-kip848-vectors"
VERSION = 1

# The classes a tagged object's "type" may name.
_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        *(
            value
            for value in vars(consumer_groups).values()
            if isinstance(value, type) and dataclasses.is_dataclass(value)
        ),
        RequestRef,
        RequestArrived,
        SessionTimeoutExpired,
        RebalanceTimeoutExpired,
    )
}
_ENUMS: dict[str, type[Enum]] = {"ErrorCode": ErrorCode}


class Kip848VectorError(ValueError):
    """A KIP-848 vector file that cannot be read; the message names the file and line."""


def encode(value: Any) -> Any:
    """The JSON form of a vocabulary or event value: dataclasses and enums tagged by type."""
    if isinstance(value, Enum):
        return {"enum": type(value).__name__, "name": value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        document: dict[str, Any] = {"type": type(value).__name__}
        for item in dataclasses.fields(value):
            document[item.name] = encode(getattr(value, item.name))
        return document
    if isinstance(value, tuple | list):
        return [encode(item) for item in value]
    if isinstance(value, frozenset | set):
        return sorted(encode(item) for item in value)
    return value


def decode(document: Any, where: str = "$") -> Any:
    """The value `encode` wrote (arrays come back as tuples)."""
    if isinstance(document, list):
        return tuple(decode(item, f"{where}[{i}]") for i, item in enumerate(document))
    if isinstance(document, dict):
        if "enum" in document:
            enum = _ENUMS.get(document["enum"])
            if enum is None or document.get("name") not in enum.__members__:
                raise Kip848VectorError(f"{where}: unknown enum value {document!r}")
            return enum[document["name"]]
        cls = _TYPES.get(document.get("type", ""))
        if cls is None:
            raise Kip848VectorError(f"{where}: unknown type {document.get('type')!r}")
        values = {k: decode(v, f"{where}.{k}") for k, v in document.items() if k != "type"}
        try:
            return cls(**values)
        except (TypeError, ValueError) as error:
            raise Kip848VectorError(f"{where}: {cls.__name__}: {error}") from None
    return document


def _plain(value: Any) -> Any:
    """`value` encoded and normalised as JSON reads it back (tuples become lists)."""
    return json.loads(json.dumps(encode(value)))


def outcome_document(outcome: Outcome) -> list[Any]:
    """An allowed outcome as a vector stores it: [responses by ref, state projection]."""
    pairs = ((reply.ref, reply.body) for reply in outcome.responses)
    return _plain([_responses(pairs), spec_projection(outcome.state)])


# -- exploring ---------------------------------------------------------------------------------


class _Recording(ConsumerGroupCoordinatorSpec):
    """The spec, remembering every (state, input) it is stepped with and its outcomes."""

    def __init__(self, config: ConsumerGroupConfig) -> None:
        super().__init__(config)
        self.seen: dict[tuple[ConsumerGroupsState, ConsumerGroupInput], tuple[Outcome, ...]] = {}
        self.order: list[tuple[ConsumerGroupsState, ConsumerGroupInput]] = []

    def step(
        self, state: ConsumerGroupsState, event: ConsumerGroupInput, now_ms: int
    ) -> tuple[Outcome, ...]:
        """The spec's outcomes, recorded the first time (state, event) is met."""
        key = (state, event)
        found = self.seen.get(key)
        if found is None:
            found = super().step(state, event, now_ms)
            self.seen[key] = found
            self.order.append(key)
        return found


@dataclass
class Kip848Node:
    """One coordinator transition of the tree."""

    node: int
    parent: int
    input: ConsumerGroupInput
    allowed: list[Any]
    taken: int


@dataclass
class Kip848Runs:
    """A preset's coordinator transitions as a tree, with what exploring it took."""

    preset: str
    config: ConsumerGroupConfig
    nodes: list[Kip848Node]
    world_states: int
    elapsed_s: float

    @property
    def leaves(self) -> list[int]:
        """The nodes no other node continues from."""
        parents = {node.parent for node in self.nodes}
        return [node.node for node in self.nodes if node.node not in parents]


def explore_kip848_runs(
    preset: str, world: Kip848World, progress: Callable[[int, int], None] | None = None
) -> Kip848Runs:
    """Explore `world` breadth-first and return the tree of its coordinator transitions."""
    started = time.monotonic()
    recording = _Recording(world.config)
    explored = Kip848World(world.parameters, world.name, coordinator=recording)
    seen: set[bytes] = set()
    frontier = list(explored.initial_states())
    for state in frontier:
        seen.add(state.canonical_bytes())
    while frontier:
        following = []
        for state in frontier:
            for step in explored.transitions(state):
                successor = getattr(step, "state", None)
                if successor is None:
                    continue
                key = successor.canonical_bytes()
                if key not in seen:
                    seen.add(key)
                    following.append(successor)
        frontier = following
        if progress is not None:
            progress(len(seen), len(recording.seen))
    by_state: dict[ConsumerGroupsState, list[ConsumerGroupInput]] = {}
    for coordinator, event in recording.order:
        by_state.setdefault(coordinator, []).append(event)
    nodes: list[Kip848Node] = []
    root = recording.initial_state()
    entered = {root}
    queue = [(root, 0)]
    while queue:
        at, number = queue.pop(0)
        for event in by_state.get(at, ()):
            outcomes = recording.seen[(at, event)]
            allowed = [outcome_document(outcome) for outcome in outcomes]
            for index, outcome in enumerate(outcomes):
                node = Kip848Node(len(nodes) + 1, number, event, allowed, index)
                nodes.append(node)
                if outcome.state not in entered:
                    entered.add(outcome.state)
                    queue.append((outcome.state, node.node))
    return Kip848Runs(preset, world.config, nodes, len(seen), time.monotonic() - started)


# -- files -------------------------------------------------------------------------------------


def _config_document(config: ConsumerGroupConfig) -> dict[str, Any]:
    return {
        "session_timeout_ms": config.session_timeout_ms,
        "heartbeat_interval_ms": config.heartbeat_interval_ms,
        "max_size": config.max_size,
        "assignors": list(config.assignors),
        "assignment_interval_ms": config.assignment_interval_ms,
        "topics": [[t.name, t.topic_id, t.partitions] for t in config.topics],
    }


def _config(document: Any, where: str) -> ConsumerGroupConfig:
    try:
        return ConsumerGroupConfig(
            session_timeout_ms=document["session_timeout_ms"],
            heartbeat_interval_ms=document["heartbeat_interval_ms"],
            max_size=document["max_size"],
            assignors=tuple(document["assignors"]),
            assignment_interval_ms=document["assignment_interval_ms"],
            topics=tuple(TopicMetadata(*topic) for topic in document["topics"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise Kip848VectorError(f"{where}: bad config: {error}") from None


def _open(path: Path, mode: str) -> IO[Any]:
    if path.name.endswith(".gz"):
        return cast(IO[Any], gzip.open(path, mode + "t", encoding="utf-8"))
    return path.open(mode, encoding="utf-8")


def write_kip848_vectors(runs: Kip848Runs, path: Path) -> None:
    """Write `runs` as a vector file (gzip when `path` ends in .gz), byte-for-byte stable."""
    header = {
        "format": FORMAT,
        "version": VERSION,
        "preset": runs.preset,
        "config": _config_document(runs.config),
        "coordinator_transitions": len(runs.nodes),
        "vectors": len(runs.leaves),
        "world_states": runs.world_states,
    }
    temporary = path.with_name(path.name + ".partial")
    if path.name.endswith(".gz"):
        with (
            temporary.open("wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as packed,
        ):
            for line in _lines(header, runs):
                packed.write(line.encode("utf-8"))
    else:
        with temporary.open("w", encoding="utf-8") as out:
            for line in _lines(header, runs):
                out.write(line)
    temporary.replace(path)


def _lines(header: dict[str, Any], runs: Kip848Runs) -> Iterator[str]:
    yield json.dumps(header, sort_keys=True) + "\n"
    for node in runs.nodes:
        document = {
            "node": node.node,
            "parent": node.parent,
            "input": encode(node.input),
            "allowed": node.allowed,
            "taken": node.taken,
        }
        yield json.dumps(document, sort_keys=True) + "\n"


def is_kip848_vector_file(path: Path) -> bool:
    """Whether `path` starts with a KIP-848 vector header."""
    try:
        with _open(path, "r") as handle:
            first = handle.readline()
        header = loads_strict(first)
    except (OSError, ValueError, EOFError, zlib.error):
        return False
    return isinstance(header, dict) and header.get("format") == FORMAT


@dataclass
class Kip848VectorFile:
    """A read vector file."""

    path: Path
    preset: str
    config: ConsumerGroupConfig
    nodes: dict[int, Kip848Node]

    def leaves(self) -> list[int]:
        """The nodes no other node continues from, in file order."""
        parents = {node.parent for node in self.nodes.values()}
        return [number for number in self.nodes if number not in parents]

    def path_to(self, number: int) -> list[Kip848Node]:
        """The nodes from the root to `number`, in order."""
        path = []
        while number != 0:
            node = self.nodes[number]
            path.append(node)
            number = node.parent
        return path[::-1]


def read_kip848_vectors(path: Path) -> Kip848VectorFile:
    """Read a vector file; `Kip848VectorError` names the line of anything malformed."""
    try:
        with _open(path, "r") as handle:
            lines = handle.read().splitlines()
    except (OSError, EOFError, ValueError, zlib.error) as error:
        raise Kip848VectorError(f"{path}: {error}") from None
    if not lines:
        raise Kip848VectorError(f"{path}: empty file")
    try:
        header = loads_strict(lines[0])
    except ValueError as error:
        raise Kip848VectorError(f"{path}:1: {error}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise Kip848VectorError(f"{path}:1: not a {FORMAT} file")
    if header.get("version") != VERSION:
        raise Kip848VectorError(f"{path}:1: version {header.get('version')!r}, expected {VERSION}")
    config = _config(header.get("config"), f"{path}:1")
    nodes: dict[int, Kip848Node] = {}
    for number, line in enumerate(lines[1:], start=2):
        where = f"{path}:{number}"
        try:
            document = loads_strict(line)
            node = Kip848Node(
                int(document["node"]),
                int(document["parent"]),
                decode(document["input"], f"{where}: input"),
                list(document["allowed"]),
                int(document["taken"]),
            )
        except (ValueError, KeyError, TypeError) as error:
            raise Kip848VectorError(f"{where}: {error}") from None
        if node.parent != 0 and node.parent not in nodes:
            raise Kip848VectorError(f"{where}: parent {node.parent} not defined before")
        if not 0 <= node.taken < len(node.allowed):
            raise Kip848VectorError(f"{where}: taken {node.taken} outside allowed")
        nodes[node.node] = node
    return Kip848VectorFile(path, str(header.get("preset", path.stem)), config, nodes)


# -- replaying ---------------------------------------------------------------------------------


@dataclass
class Kip848Failure:
    """A step whose outcome no allowed one matches."""

    node: int
    step: int
    actual: Any
    allowed: list[Any]


@dataclass
class Kip848VectorReport:
    """What replaying a file found."""

    preset: str
    vectors: int = 0
    steps: int = 0
    transitions: int = 0
    covered: set[int] = field(default_factory=set)
    diverged: int = 0
    failures: list[Kip848Failure] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """No step outside the allowed outcomes, and every transition replayed (with hints an
        implementation follows every vector; without, the transitions behind the outcomes it
        does not choose stay unvisited, and the report is not a pass)."""
        return not self.failures and len(self.covered) == self.transitions


# Apply one vector step: (input, allowed outcomes, the one taken) -> the outcome seen.
Follow = Callable[[ConsumerGroupInput, list[Any], int], Any]


def _responses(pairs: Any) -> list[list[Any]]:
    ordered = sorted(((str(ref), body) for ref, body in pairs), key=lambda pair: pair[0])
    return [[ref, body] for ref, body in ordered]


def _impl_replay(config: ConsumerGroupConfig, hints: bool = True) -> Follow:
    """A fresh optimized coordinator; each step answers its outcome. With `hints`, a target the
    impl computes is replaced by the one of the outcome the vector takes (when it assigns the
    same members), as the classic vectors hint their choices: the impl then follows every
    vector, not only those of its own choices."""
    hinted: dict[str, dict[str, frozenset[TopicPartition]]] = {}

    def settle(group_id: str, computed: dict[str, Partitions]) -> dict[str, Partitions]:
        target = hinted.get(group_id)
        return target if target is not None and set(target) == set(computed) else computed

    impl = ConsumerGroupCoordinator(
        impl_config(config),
        clock=ManualClock(0),
        new_member_id=spec_member_ids(),
        settle_target=settle if hints else None,
    )

    def follow(event: ConsumerGroupInput, allowed: list[Any], taken: int) -> Any:
        hinted.clear()
        for group in allowed[taken][1]:
            hinted[group[0]] = {
                member_id: frozenset(TopicPartition(topic, number) for topic, number in parts)
                for member_id, parts in group[6]
            }
        if isinstance(event, RequestArrived):
            request = event.request
            if not isinstance(
                request, ConsumerGroupHeartbeatRequest | ConsumerGroupDescribeRequest
            ):
                # impl/kip848 serves the two consumer-group APIs only, not offsets or admin yet.
                raise TypeError(f"impl/kip848 does not serve {type(request).__name__}")
            impl.handle(event.ref, request)
        elif isinstance(event, (SessionTimeoutExpired, RebalanceTimeoutExpired)):
            impl.fire(impl_timer(event))
        else:
            # impl/kip848 keeps no log: a failover (spec/kip848/failover.py) is not served yet.
            raise TypeError(f"impl/kip848 does not serve {type(event).__name__}")
        assert impl.outbox is not None
        return _plain([_responses(impl.outbox.take().items()), impl_projection(impl)])

    return follow


def _key(document: Any) -> str:
    return json.dumps(document, sort_keys=True)


def _spec_replay(config: ConsumerGroupConfig) -> Follow:
    """The specification, continuing from the outcome the vector took; a step answers that
    outcome when the spec allows exactly the recorded ones, else what it allows."""
    spec = ConsumerGroupCoordinatorSpec(config)
    states = [spec.initial_state()]

    def follow(event: ConsumerGroupInput, allowed: list[Any], taken: int) -> Any:
        outcomes = spec.step(states[-1], event, 0)
        documents = [outcome_document(outcome) for outcome in outcomes]
        if sorted(_key(d) for d in documents) != sorted(_key(a) for a in allowed):
            return documents
        states.append(outcomes[documents.index(allowed[taken])].state)
        return allowed[taken]

    return follow


def run_kip848_vectors(
    vectors: Kip848VectorFile, adapter: str = "impl", max_failures: int = 10, hints: bool = True
) -> Kip848VectorReport:
    """Replay every vector on the impl (or on the spec, `adapter="spec"`); `hints` steers the
    impl's target computations onto the vectors' (see `_impl_replay`)."""
    report = Kip848VectorReport(vectors.preset, transitions=len(vectors.nodes))
    siblings = {
        (node.parent, _key(encode(node.input)), node.taken): node.node
        for node in vectors.nodes.values()
    }
    for leaf in vectors.leaves():
        report.vectors += 1
        follow = (
            _spec_replay(vectors.config)
            if adapter == "spec"
            else _impl_replay(vectors.config, hints)
        )
        for index, node in enumerate(vectors.path_to(leaf)):
            report.steps += 1
            actual = follow(node.input, node.allowed, node.taken)
            if actual == node.allowed[node.taken]:
                report.covered.add(node.node)
                continue
            if adapter != "spec" and actual in node.allowed:
                # Another allowed outcome: the vector that takes it covers this transition.
                report.diverged += 1
                sibling = siblings.get(
                    (node.parent, _key(encode(node.input)), node.allowed.index(actual))
                )
                if sibling is not None:
                    report.covered.add(sibling)
            else:
                report.failures.append(Kip848Failure(node.node, index, actual, node.allowed))
            break
        if len(report.failures) >= max_failures:
            break
    return report
