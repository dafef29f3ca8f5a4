"""Resynchronizing after a divergence: the specification's state takes on what was observed.

When no specification state allows an observed response, the oracle reports the divergence and
goes on judging. It keeps the states whose own response agrees with the observed one on every
error code (the fact a client acts on); if none does, it keeps them all, and the observed error
stands (`adopt.error`). Each kept state then takes on the facts the response shows, through one
named step each (docs/oracle.md, "Judging past a divergence"):

- `adopt.member-id`: member ids the response shows where the specification's shows one are
  bound to it (`Binding.adopt`);
- `adopt.generation`: a successful JoinGroup's generation becomes the group's (and that of the
  JoinGroup responses of the same round not yet observed);
- `adopt.leader`: a successful JoinGroup's leader, if a member, becomes the group's leader;
- `adopt.assignment`: a successful SyncGroup's assignment becomes the member's.

A response the specification would not have sent yet (`adopt.early`) is answered by firing the
specification's timers ahead of time (`Tracker.explain_early`), then kept and adopted as above;
failing that it is taken as sent, and the specification's own, when it comes, is dropped. Every step is a fact the observed coordinator
stated, so what follows is judged against a state consistent with what clients were told.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from groupspec.spec.state import CoordinatorState
from groupspec.vocabulary import requests as rq
from groupspec.vocabulary.responses import JoinGroupResponse
from groupspec.wire.group_apis import JOIN_GROUP, SYNC_GROUP

from .binding import Binding
from .tracker import Hypothesis

ADOPT_ERROR = "adopt.error"
ADOPT_EARLY = "adopt.early"
ADOPT_MEMBER_ID = "adopt.member-id"
ADOPT_GENERATION = "adopt.generation"
ADOPT_LEADER = "adopt.leader"
ADOPT_ASSIGNMENT = "adopt.assignment"


def adopt_facts(
    state: CoordinatorState,
    api_key: int,
    requests: tuple[rq.Request, ...],
    observed: dict[str, Any],
    binding: Binding,
) -> tuple[CoordinatorState, tuple[str, ...]]:
    """`state` with the facts of the observed successful JoinGroup or SyncGroup response taken
    on, and the names of the steps that changed something. `requests` are as observed (ids in
    the observed coordinator's spelling)."""
    if observed.get("error_code") != 0 or len(requests) != 1:
        return state, ()
    request = requests[0]
    group = state.group(getattr(request, "group_id", ""))
    if group is None:
        return state, ()
    steps: list[str] = []
    if api_key == JOIN_GROUP:
        generation = observed.get("generation_id")
        if isinstance(generation, int) and generation != group.generation_id:
            timer = group.sync_timer
            if timer is not None and timer.generation_id == group.generation_id:
                timer = dataclasses.replace(timer, generation_id=generation)
            group = dataclasses.replace(group, generation_id=generation, sync_timer=timer)
            steps.append(ADOPT_GENERATION)
        leader = binding.to_spec(str(observed.get("leader") or ""))
        if group.has_member(leader) and group.leader_id != leader:
            group = dataclasses.replace(group, leader_id=leader)
            steps.append(ADOPT_LEADER)
    elif api_key == SYNC_GROUP and isinstance(request, rq.SyncGroupRequest):
        member = group.member(binding.to_spec(request.member_id))
        assignment = _bytes(observed.get("assignment"))
        if member is not None and assignment is not None and member.assignment != assignment:
            group = group.update_member(member.member_id, assignment=assignment)
            steps.append(ADOPT_ASSIGNMENT)
    return (state.with_group(group), tuple(steps)) if steps else (state, ())


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        return None


def adopt_into(
    hypothesis: Hypothesis,
    api_key: int,
    requests: tuple[rq.Request, ...],
    observed: dict[str, Any],
    binding: Binding,
) -> tuple[Hypothesis, tuple[str, ...]]:
    """`hypothesis` with `binding` and the observed response's facts taken on (`adopt_facts`);
    a generation adopted also renumbers the round's JoinGroup responses not yet observed."""
    state, steps = adopt_facts(hypothesis.state, api_key, requests, observed, binding)
    outbox = hypothesis.outbox
    if ADOPT_GENERATION in steps:
        group_id = getattr(requests[0], "group_id", "")
        old, new = hypothesis.state.group(group_id), state.group(group_id)
        if old is not None and new is not None:
            outbox = tuple(
                (ref, tuple(_renumbered(b, old.generation_id, new.generation_id) for b in bodies))
                for ref, bodies in outbox
            )
    return dataclasses.replace(hypothesis, state=state, binding=binding, outbox=outbox), steps


def _renumbered(body: Any, old: int, new: int) -> Any:
    if isinstance(body, JoinGroupResponse) and body.generation_id == old and not body.error_code:
        return dataclasses.replace(body, generation_id=new)
    return body
