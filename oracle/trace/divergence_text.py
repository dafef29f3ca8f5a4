"""Divergences for people: responses and coordinator state in the observed coordinator's ids."""

from __future__ import annotations

from typing import Any

from groupspec.spec.state import CoordinatorState, Group
from groupspec.vocabulary.errors import ErrorCode

from .binding import Binding

_ID_FIELDS = frozenset({"member_id", "leader"})


def render_response(body: Any, binding: Binding) -> Any:
    """A Kafka-shaped response of the specification's, member ids spelled as the observed
    coordinator spells them (ids it has not handed out yet are marked new)."""
    if isinstance(body, dict):
        return {
            k: binding.render(v)
            if k in _ID_FIELDS and isinstance(v, str) and v
            else render_response(v, binding)
            for k, v in body.items()
            if k != "throttle_time_ms"  # never compared, and always 0 on the specification's side
        }
    if isinstance(body, list):
        return [render_response(item, binding) for item in body]
    return body


def error_names(body: Any) -> list[str]:
    """The names of the error codes anywhere in a Kafka-shaped body, for people."""
    found: list[str] = []
    if isinstance(body, dict):
        for k, v in body.items():
            if k == "error_code" and isinstance(v, int):
                found.append(_error_name(v))
            else:
                found.extend(error_names(v))
    elif isinstance(body, list):
        for item in body:
            found.extend(error_names(item))
    return found


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def render_state(state: CoordinatorState, group_ids: frozenset[str], binding: Binding) -> str:
    """The groups a divergent request names, as the specification holds them."""
    lines = []
    for group_id in sorted(group_ids):
        group = state.group(group_id)
        if group is None:
            lines.append(f"group {group_id!r}: not held by the coordinator")
            continue
        lines.extend(_group_lines(group, binding))
    return "\n".join(lines)


def _group_lines(group: Group, binding: Binding) -> list[str]:
    name = binding.render
    leader = name(group.leader_id) if group.leader_id else "-"
    lines = [
        f"group {group.group_id!r}: {group.state.value}, generation {group.generation_id}, "
        f"protocol {group.protocol_name or '-'}, leader {leader}"
    ]
    for m in group.members:
        parked = [
            what for what, ref in (("join", m.awaiting_join), ("sync", m.awaiting_sync)) if ref
        ]
        lines.append(
            f"  member {name(m.member_id)}"
            + (f" (instance {m.group_instance_id})" if m.group_instance_id else "")
            + f", session deadline {m.heartbeat_deadline_ms} ms"
            + (f", parked in {' and '.join(parked)}" if parked else "")
        )
    for pending in group.pending_members:
        lines.append(
            f"  pending member {name(pending.member_id)}, expires at {pending.expiry_deadline_ms} ms"
        )
    if group.join_timer is not None:
        lines.append(f"  join timer due at {group.join_timer.deadline_ms} ms")
    if group.sync_timer is not None:
        lines.append(f"  sync timer due at {group.sync_timer.deadline_ms} ms")
    return lines


def first_difference(allowed: Any, observed: Any, path: str = "") -> str | None:
    """The path of the first field where an observed body differs from an allowed one (as
    `render_response` shows it), for grouping divergences; ids the specification has not
    handed out yet match any id; None if they agree."""
    if isinstance(allowed, dict) and isinstance(observed, dict):
        for key, value in allowed.items():
            if key not in observed:
                continue  # not a field of the observed version, so not compared
            found = first_difference(value, observed[key], f"{path}.{key}" if path else key)
            if found is not None:
                return found
        return None
    if isinstance(allowed, list) and isinstance(observed, list):
        if len(allowed) != len(observed):
            return path or "."
        for one, other in zip(allowed, observed, strict=True):
            found = first_difference(one, other, f"{path}[]")
            if found is not None:
                return found
        return None
    if isinstance(allowed, str) and allowed.startswith("<new id ") and isinstance(observed, str):
        return None
    return None if allowed == observed else (path or ".")
