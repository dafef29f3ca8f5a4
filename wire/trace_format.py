"""The trace format: JSON Lines of group-API traffic, read and written (docs/trace-format.md).

A trace is what a coordinator was seen to do: every group-API request a client sent and every
response it got, with when and on which connection. `groupspec record` writes one from the bytes
on the wire; an implementation may write one from its own instrumentation; `groupspec validate`
judges one against the specification. This module knows the format only: the standard library,
and which APIs a trace carries (`group_apis`); nothing from the specification.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, Literal

from .group_apis import TRACED_APIS
from .json_lines import JsonInputError, LineDecodeError, decoded_lines, loads_strict

FORMAT = "groupspec-trace"
VERSION = 1

REQUEST: Final = "request"
RESPONSE: Final = "response"
CLOSE: Final = "close"
Direction = Literal["request", "response", "close"]

# The APIs a trace carries: the group coordinator's, classic and KIP-848's, by Kafka API key
# (one entry each in `group_apis`).
API_NAMES: dict[int, str] = {api.key: api.name for api in TRACED_APIS}
API_KEYS: dict[str, int] = {name: key for key, name in API_NAMES.items()}

# A correlation id is an INT32 on the wire; a timestamp fits Kafka's INT64 milliseconds.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MAX_TS_MS = 2**63 - 1

# Fields whose values are bytes on the wire: base64 in a trace.
BYTES_FIELDS = frozenset({"metadata", "assignment", "member_metadata", "member_assignment"})


class TraceFormatError(Exception):
    """A trace that is not in the format: names the file and line."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}:{line}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


@dataclass(frozen=True, slots=True)
class TraceHeader:
    """The first line: the format, its version, and what the validator should assume.

    `coordinator` holds broker settings in the names of the specification's CoordinatorConfig
    (for example `group_initial_rebalance_delay_ms`); settings it omits are Kafka's defaults.
    """

    source: str = ""
    coordinator: dict[str, Any] = field(default_factory=dict)
    # Consumer-protocol (KIP-848) settings in the names of the specification's
    # ConsumerGroupConfig (`spec/kip848/config.py`), `topics` as a list of
    # {"name", "topic_id", "partitions"}: what the consumer-protocol oracle needs to judge
    # ConsumerGroupHeartbeat and ConsumerGroupDescribe. Written only when set.
    consumer_groups: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The header as a JSON object."""
        document = {
            "format": FORMAT,
            "version": VERSION,
            "source": self.source,
            "coordinator": self.coordinator,
        }
        if self.consumer_groups:
            document["consumer_groups"] = self.consumer_groups
        return document


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One observation: a request sent, a response received, or a connection closed.

    `ts_ms` is milliseconds since the epoch (fractions allowed) when the recorder saw it;
    `connection` names the client connection; a response answers the request with the same
    `connection` and `correlation_id`. `body` holds the message's fields in the Kafka schema's
    snake_case names, bytes as base64; `None` for a close. A response the recorder could not
    decode has `body` None and `undecodable` saying why (it still answers its request).
    """

    ts_ms: float
    connection: str
    direction: Direction
    api_key: int = -1
    api_version: int = -1
    correlation_id: int = -1
    client_id: str | None = None
    body: dict[str, Any] | None = None
    undecodable: str | None = None

    @property
    def api(self) -> str:
        """The API's name (JoinGroup, ...), or "" for a close."""
        return API_NAMES.get(self.api_key, "")

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON object (one line of a trace)."""
        if self.direction == CLOSE:
            return {"ts": self.ts_ms, "conn": self.connection, "dir": CLOSE}
        document: dict[str, Any] = {
            "ts": self.ts_ms,
            "conn": self.connection,
            "dir": self.direction,
            "api": self.api,
            "key": self.api_key,
            "ver": self.api_version,
            "corr": self.correlation_id,
        }
        if self.direction == REQUEST:
            document["client_id"] = self.client_id
        document["body"] = self.body
        if self.undecodable is not None:
            document["undecodable"] = self.undecodable
        return document


class TraceWriter:
    """Appends events to a trace file, one flushed line each, so a crash loses at most one."""

    def __init__(self, out: IO[str], header: TraceHeader) -> None:
        self._out = out
        self._write(header.to_json())

    def write(self, event: TraceEvent) -> None:
        """Append `event`."""
        self._write(event.to_json())

    def _write(self, document: dict[str, Any]) -> None:
        self._out.write(json.dumps(document, separators=(",", ":")) + "\n")
        self._out.flush()


@dataclass
class TraceReading:
    """What reading a trace found besides its events: the header, and a cut last line."""

    header: TraceHeader = field(default_factory=TraceHeader)
    events: int = 0
    cut_at_line: int | None = None


def read_trace(source: Path | str, reading: TraceReading | None = None) -> Iterator[TraceEvent]:
    """The events of the trace at `source`, checked line by line.

    Raises `TraceFormatError` naming the line for anything not in the format, for events out
    of time order, and for a response with no request before it. A last line without its
    newline that does not parse is a trace cut while being written: reading stops before it
    and `reading.cut_at_line` names it.
    """
    reading = reading if reading is not None else TraceReading()
    path = Path(source)
    with path.open("rb") as handle:
        yield from parse_lines(text_lines(handle, str(path)), str(path), reading)


def text_lines(raw_lines: Iterable[bytes], source: str) -> Iterator[str]:
    """The lines of a trace read as bytes, decoded one by one; TraceFormatError naming the line
    that is not UTF-8."""
    try:
        yield from decoded_lines(raw_lines)
    except LineDecodeError as error:
        raise TraceFormatError(source, error.line, error.problem) from None


def parse_lines(
    lines: IO[str] | Iterator[str], source: str, reading: TraceReading
) -> Iterator[TraceEvent]:
    """The events of a trace given as lines (see `read_trace`)."""
    checker = _OrderChecker(source)
    number = 0
    for number, line in enumerate(lines, start=1):
        try:
            document = loads_strict(line)
        except JsonInputError as error:
            if error.incomplete and not line.endswith("\n"):
                reading.cut_at_line = number
                return
            raise TraceFormatError(source, number, error.problem) from None
        if number == 1:
            reading.header = parse_header(document, source)
            continue
        event = parse_event(document, source, number)
        checker.check(event, number)
        reading.events += 1
        yield event
    if number == 0:
        raise TraceFormatError(source, 1, "empty file: a trace starts with its header line")


def parse_header(document: Any, source: str) -> TraceHeader:
    """The header line, checked."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise TraceFormatError(
            source, 1, f'the first line must be a header with "format": "{FORMAT}"'
        )
    version = document.get("version")
    if version != VERSION:
        raise TraceFormatError(
            source, 1, f"trace format version {version!r}; this groupspec reads version {VERSION}"
        )
    coordinator = document.get("coordinator", {})
    if not isinstance(coordinator, dict):
        raise TraceFormatError(source, 1, '"coordinator" must be an object of broker settings')
    consumer_groups = document.get("consumer_groups", {})
    if not isinstance(consumer_groups, dict):
        raise TraceFormatError(
            source, 1, '"consumer_groups" must be an object of consumer-protocol settings'
        )
    return TraceHeader(str(document.get("source", "")), coordinator, consumer_groups)


def parse_event(document: Any, source: str, line: int) -> TraceEvent:
    """One event line, checked field by field."""
    if not isinstance(document, dict):
        raise TraceFormatError(source, line, "an event must be a JSON object")

    def need(name: str, kind: type | tuple[type, ...]) -> Any:
        value = document.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise TraceFormatError(source, line, f'"{name}" is missing or not {_kind(kind)}')
        return value

    ts = need("ts", (int, float))
    if not 0 <= ts <= MAX_TS_MS:
        raise TraceFormatError(source, line, f'"ts" {ts} is not a time in milliseconds')
    connection = need("conn", str)
    direction = need("dir", str)
    if direction == CLOSE:
        return TraceEvent(ts, connection, CLOSE)
    if direction not in (REQUEST, RESPONSE):
        raise TraceFormatError(
            source, line, f'"dir" must be "request", "response" or "close", not {direction!r}'
        )
    key = need("key", int)
    if key not in API_NAMES:
        raise TraceFormatError(
            source,
            line,
            f"unknown API key {key}: a trace carries the group APIs {sorted(API_NAMES)}",
        )
    named = document.get("api")
    if named is not None and named != API_NAMES[key]:
        raise TraceFormatError(
            source, line, f'"api" {named!r} does not match key {key} ({API_NAMES[key]})'
        )
    version = need("ver", int)
    if not 0 <= version <= 32767:
        raise TraceFormatError(source, line, f'"ver" {version} is not an API version')
    correlation = need("corr", int)
    if not INT32_MIN <= correlation <= INT32_MAX:
        raise TraceFormatError(source, line, f'"corr" {correlation} is not a 32-bit integer')
    undecodable = document.get("undecodable")
    if undecodable is not None:
        if direction != RESPONSE or not isinstance(undecodable, str):
            raise TraceFormatError(source, line, '"undecodable" is a response\'s reason, a string')
        return TraceEvent(
            ts, connection, RESPONSE, key, version, correlation, None, None, undecodable
        )
    body = need("body", dict)
    client_id = document.get("client_id")
    if client_id is not None and not isinstance(client_id, str):
        raise TraceFormatError(source, line, '"client_id" must be a string or null')
    return TraceEvent(ts, connection, direction, key, version, correlation, client_id, body)


def _kind(kind: type | tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", dict: "an object"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


class _OrderChecker:
    """Time never goes back; a response follows its request; a request id is not reused while
    its request is outstanding."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.last_ts = 0.0
        self.outstanding: dict[tuple[str, int], tuple[int, int]] = {}

    def check(self, event: TraceEvent, line: int) -> None:
        if event.ts_ms < self.last_ts:
            raise TraceFormatError(
                self.source,
                line,
                f"events out of order: ts {event.ts_ms} is before the previous event's {self.last_ts}",
            )
        self.last_ts = event.ts_ms
        key = (event.connection, event.correlation_id)
        if event.direction == REQUEST:
            if key in self.outstanding:
                raise TraceFormatError(
                    self.source,
                    line,
                    f"request {event.connection}#{event.correlation_id} repeats the correlation id "
                    f"of the unanswered request on line {self.outstanding[key][0]}",
                )
            self.outstanding[key] = (line, event.api_key)
        elif event.direction == RESPONSE:
            request = self.outstanding.pop(key, None)
            if request is None:
                raise TraceFormatError(
                    self.source,
                    line,
                    f"events out of order: a response to {event.connection}#{event.correlation_id} "
                    "with no request before it",
                )
            if request[1] != event.api_key:
                raise TraceFormatError(
                    self.source,
                    line,
                    f"a {event.api} response answers the {API_NAMES[request[1]]} request "
                    f"on line {request[0]}",
                )
        else:
            for pending in [k for k in self.outstanding if k[0] == event.connection]:
                del self.outstanding[pending]
