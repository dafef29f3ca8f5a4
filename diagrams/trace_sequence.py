"""A recorded exchange drawn as a sequence diagram (`sequence_diagram.SequenceDiagram`): the
excerpt `groupspec validate` gives of a divergence, around the divergent response.

The excerpt is read as its JSON objects (docs/trace-format.md, each with its trace line number
in `line`). The coordinator gets the first lifeline and each client connection one of its own,
named by the client id its requests carry. A request is an arrow from its client to the
coordinator, a response one back, each labelled with what matters of it (the API, the
correlation id, the member and generation a request names, the error and generation a response
answers); a closed connection is a dot on its lifeline. Each client's lifeline is coloured by
the phase its responses put it in (joining, awaiting sync, stable, rejoin needed, closed), as
in the project's other diagrams. The divergent response is marked by a dashed rule below it
and annotated with what the specification allowed there; the footer says why it diverged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from groupspec.vocabulary.errors import ErrorCode

from .sequence_diagram import LOCAL, MESSAGE, Lane, SequenceDiagram, SequenceEvent, validate

COORDINATOR = "coordinator"
# The events drawn: the divergent response and those just before it.
WINDOW = 24
# Kafka spells member ids `<client.id>-<UUID>`: drawn as the client id and the UUID's start.
_UUID_ID = re.compile(r"^(.*)-([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_PHASES_AFTER_ERROR = {
    "REBALANCE_IN_PROGRESS": "rejoin needed",
    "ILLEGAL_GENERATION": "rejoin needed",
    "UNKNOWN_MEMBER_ID": "unjoined",
    "FENCED_INSTANCE_ID": "fatal",
}


def excerpt_sequence(
    excerpt: Sequence[Mapping[str, Any]],
    divergent_line: int,
    *,
    title: str,
    outcome: str,
    allowed: Sequence[Mapping[str, Any]] = (),
    window: int = WINDOW,
) -> SequenceDiagram:
    """The excerpt's last `window` events up to the response on `divergent_line` (its request
    too, however far before), as a sequence diagram; the divergent response is annotated with
    what the specification `allowed` there."""
    events = [e for e in excerpt if int(e.get("line", 0)) <= divergent_line]
    if not events or int(events[-1].get("line", 0)) != divergent_line:
        raise ValueError(f"the excerpt does not end at line {divergent_line}")
    shown = _window(events, window)
    lanes, lane_of = _lanes(shown)
    phases = ["" for _ in lanes]
    drawn = []
    for event in shown:
        lane = lane_of[str(event.get("conn"))]
        phases[lane] = _phase_after(event, phases[lane])
        where = f"L{event.get('line')} "
        if event.get("dir") == "close":
            text = where + "closes the connection"
            drawn.append(SequenceEvent(LOCAL, lane, text, tuple(phases)))
        elif event.get("dir") == "request":
            text = where + _request_text(event)
            drawn.append(SequenceEvent(MESSAGE, 0, text, tuple(phases), lane))
        else:
            text = where + _response_text(event)
            drawn.append(SequenceEvent(MESSAGE, lane, text, tuple(phases), 0))
    if allowed:
        others = f" (or {len(allowed) - 1} more)" if len(allowed) > 1 else ""
        note = f"▸ allowed: {_answer(allowed[0])}{others}"
        drawn[-1] = replace(drawn[-1], annotation=note)
    left_out = len(events) - len(shown)
    subtitle = [
        f"the excerpt's last {len(shown)} of {len(events)} events, lines "
        f"{shown[0].get('line')}–{divergent_line}"
        + (f" ({left_out} earlier ones not drawn)" if left_out else "")
    ]
    marks = ((len(drawn) - 1, f"line {divergent_line}, above: where it diverged"),)
    diagram = SequenceDiagram(
        title,
        tuple(subtitle),
        lanes,
        tuple("" for _ in lanes),
        tuple(drawn),
        outcome,
        None,
        marks,
    )
    validate(diagram)
    return diagram


def _window(events: list[Mapping[str, Any]], window: int) -> list[Mapping[str, Any]]:
    """The last `window` events, and the divergent response's request if it came earlier."""
    shown = events[-window:]
    last = events[-1]
    ref = (last.get("conn"), last.get("corr"))
    if last.get("dir") == "response" and not any(
        e.get("dir") == "request" and (e.get("conn"), e.get("corr")) == ref for e in shown
    ):
        request = [
            e for e in events if e.get("dir") == "request" and (e.get("conn"), e.get("corr")) == ref
        ]
        shown = request[-1:] + shown[len(request[-1:]) :]
    return shown


def _lanes(events: Sequence[Mapping[str, Any]]) -> tuple[tuple[Lane, ...], dict[str, int]]:
    """The coordinator's lane, then one per connection in order of appearance, named by the
    client id its requests carry (numbered when a client has several connections)."""
    connections: dict[str, str] = {}
    for event in events:
        connection = str(event.get("conn"))
        client = event.get("client_id")
        if connection not in connections or (client and not connections[connection]):
            connections[connection] = str(client) if client else ""
    names: dict[str, int] = {}
    lanes = [Lane(COORDINATOR, "the broker judged")]
    lane_of = {}
    for connection, client in connections.items():
        base = client or connection
        names[base] = names.get(base, 0) + 1
        name = base if names[base] == 1 else f"{base} ({names[base]})"
        lane_of[connection] = len(lanes)
        lanes.append(Lane(name, connection if client else ""))
    return tuple(lanes), lane_of


def _phase_after(event: Mapping[str, Any], phase: str) -> str:
    """A client's phase after `event` on its connection."""
    api, direction = event.get("api"), event.get("dir")
    if direction == "close":
        return "closed"
    if direction == "request":
        return "joining" if api == "JoinGroup" else phase
    body = event.get("body")
    if not isinstance(body, dict):
        return phase
    error = _error_name(body.get("error_code"))
    if error in _PHASES_AFTER_ERROR:
        return _PHASES_AFTER_ERROR[error]
    if error == "NONE" and api == "JoinGroup":
        return "awaiting sync"
    if error == "NONE" and api == "SyncGroup":
        return "stable"
    if error == "NONE" and api == "LeaveGroup":
        return "unjoined"
    return phase


def _request_text(event: Mapping[str, Any]) -> str:
    body = event.get("body") if isinstance(event.get("body"), dict) else {}
    assert isinstance(body, dict)
    parts = []
    member = body.get("member_id")
    if isinstance(member, str):
        parts.append(f"member {short_member_id(member) or '-'}")
    instance = body.get("group_instance_id")
    if isinstance(instance, str):
        parts.append(f"instance {instance}")
    for name in ("generation_id", "generation_id_or_member_epoch"):
        if isinstance(body.get(name), int) and body[name] >= 0:
            parts.append(f"gen {body[name]}")
    assignments = body.get("assignments")
    if isinstance(assignments, list) and assignments:
        parts.append(f"assigns {len(assignments)}")
    detail = f" ({', '.join(parts)})" if parts else ""
    return f"{event.get('api')} v{event.get('ver')} #{event.get('corr')}{detail}"


def _response_text(event: Mapping[str, Any]) -> str:
    head = f"{event.get('api')} #{event.get('corr')}: "
    body = event.get("body")
    return head + (_answer(body) if isinstance(body, dict) else "does not decode")


def _answer(body: Mapping[str, Any]) -> str:
    """What a response body answers, in short: its errors, generation, leader, members."""
    errors = _error_names(body)
    parts = [", ".join(dict.fromkeys(errors)) if errors else "answered"]
    if isinstance(body.get("generation_id"), int) and body["generation_id"] >= 0:
        parts.append(f"gen {body['generation_id']}")
    leader = body.get("leader")
    if isinstance(leader, str) and leader:
        parts.append(f"leader {short_member_id(leader)}")
    members = body.get("members")
    if isinstance(members, list) and members:
        parts.append(f"{len(members)} members")
    return ", ".join(parts)


def short_member_id(member_id: str) -> str:
    """A member id as people read it: Kafka's `<client.id>-<UUID>` cut to the UUID's first
    four digits."""
    match = _UUID_ID.match(member_id)
    return f"{match.group(1)}-{match.group(2)[:4]}…" if match else member_id


def _error_names(body: Any) -> list[str]:
    """The error codes anywhere in a body, by name."""
    found: list[str] = []
    if isinstance(body, dict):
        for key, value in body.items():
            if key == "error_code":
                found.append(_error_name(value))
            else:
                found.extend(_error_names(value))
    elif isinstance(body, list):
        for item in body:
            found.extend(_error_names(item))
    return found


def _error_name(code: Any) -> str:
    if not isinstance(code, int):
        return ""
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"
