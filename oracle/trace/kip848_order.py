"""Response order in the consumer protocol: which requests may have taken effect before the one
whose response is being judged.

Kafka commits a consumer group's writes to one `__consumer_offsets` partition and answers each
request once its write is committed; two heartbeats committed in one batch are answered by
different network threads, so the recorder may see the later one's response first. When a
response is judged, the consumer-protocol oracle (oracle/trace/kip848.py) therefore also keeps
the hypotheses in which heartbeats of the same group, seen and still unanswered, took effect
first (at most `AHEAD_DEPTH` of them, in any order): their answers are computed then and kept in the hypothesis (`Hypothesis.ahead`) until
their own responses arrive, which are compared with the kept answer instead of being replayed.

Which requests may go first follows the classic oracle's rule for when a request takes effect
(oracle/trace/tracker.py): between being seen and its response being seen, and at the latest
`OracleSettings.reorder_window_ms` after it was seen. So a request may precede the judged one
only if it was seen no later than `reorder_window_ms` after the judged request (later than that,
the judged request had taken effect before it arrived). Kafka handles one connection's requests
in order, so a request on the judged request's own connection never goes first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

Ref = tuple[str, int]
H = TypeVar("H")

# The most requests that may take effect ahead of the judged one. The traces that needed this
# show one; every one more multiplies the hypotheses held while the group's heartbeats are in
# flight (on a trace of five members all in flight at once, 1,320 at the worst with two and
# 1,920 with any number, against 120 judging in response order).
AHEAD_DEPTH = 2


@dataclass(frozen=True)
class InFlight:
    """A request seen and not yet answered: where and when it was seen, the groups it names
    (None when it names none the oracle can tell, so it may touch any)."""

    ref: Ref
    ts_ms: float
    groups: frozenset[str] | None


def groups_of(request: Any) -> frozenset[str] | None:
    """The groups a vocabulary request names, or None when it names none by a known field."""
    group_id = getattr(request, "group_id", None)
    if isinstance(group_id, str):
        return frozenset({group_id})
    for name in ("group_ids", "groups_names", "group_names"):
        named = getattr(request, name, None)
        if named:
            return frozenset(str(g) for g in named)
    return None


def may_precede(judged: InFlight, other: InFlight, window_ms: int) -> bool:
    """Whether `other`, in flight when `judged`'s response is seen, may have taken effect before
    `judged`: another connection, a group in common, and seen within `window_ms` of `judged`."""
    if other.ref == judged.ref or other.ref[0] == judged.ref[0]:
        return False
    if other.ts_ms > judged.ts_ms + window_ms:
        return False
    if judged.groups is None or other.groups is None:
        return True
    return bool(judged.groups & other.groups)


def orders(
    hypothesis: H,
    candidates: Sequence[Ref],
    apply: Callable[[H, Ref], list[H]],
    limit: int,
    depth: int,
) -> list[H]:
    """`hypothesis` itself and every hypothesis in which at most `depth` of `candidates` took
    effect first, in any order (`apply` takes one more, giving its outcomes; none if it
    cannot); at most `limit` in all, those with fewer requests ahead first."""
    found: list[H] = [hypothesis]
    frontier: list[tuple[H, tuple[Ref, ...]]] = [(hypothesis, ())]
    for _ in range(depth):
        if not frontier or len(found) >= limit:
            break
        following: list[tuple[H, tuple[Ref, ...]]] = []
        for current, taken in frontier:
            for ref in candidates:
                if ref in taken:
                    continue
                for after in apply(current, ref):
                    if len(found) >= limit:
                        return found
                    found.append(after)
                    following.append((after, (*taken, ref)))
        frontier = following
    return found


def frozen_body(body: dict[str, Any]) -> str:
    """A response body as a hashable text, to keep in a hypothesis until its response is seen."""
    return json.dumps(body, sort_keys=True)


def thawed_body(text: str) -> dict[str, Any]:
    """The response body `frozen_body` kept."""
    value: dict[str, Any] = json.loads(text)
    return value
