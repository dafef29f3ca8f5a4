"""Traces that start mid-stream: groups already present when the recording began (`--mid-stream`).

A recorder started while a group was running sees its members heartbeat and commit with ids
and generations it never saw handed out. Judged from an empty coordinator, every one of those
answers would diverge. With `--mid-stream` the oracle instead holds back every group until it
has learned it, through one named step (docs/oracle.md, "Traces that start mid-stream"):

- `learn.group`: a successful JoinGroup response that lists the members (the leader's) states
  the whole membership of a new generation: its number, protocol, leader and members. When
  the trace also holds each listed member's JoinGroup request of that round (for its
  protocols and timeouts), the group is taken into the specification's state as Kafka holds
  it right after that join completed: CompletingRebalance, every member's session timer
  started at the response, the sync timer armed. Member ids are taken as the specification's
  own spelling.

- `learn.pending-member`: a JoinGroup presenting a member id the learned group does not know,
  within a session timeout of the trace's first event, is taken as a pending member whose
  id was handed out (MEMBER_ID_REQUIRED) before the recording began; it expires a session
  timeout after the first event at the latest.

Until then, the group's requests are held: not applied, their responses not judged, and the
events counted as not judged (never passed). What a trace cannot show stays unjudged after
learning too: OffsetFetch of a mid-stream group (offsets committed before the recording are
unknown). A group that never rebalances while recorded is never learned.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from groupspec.spec.join import member_of_join
from groupspec.spec.rebalance import compute_subscribed_topics
from groupspec.spec.state import Group, PendingMember, SyncTimer
from groupspec.vocabulary import requests as rq
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, PREPARING_REBALANCE
from groupspec.wire.group_apis import JOIN_GROUP, OFFSET_FETCH

from .comparison import MEMBER_ID_REQUIRED
from .tracker import Pending, Ref

LEARN_GROUP = "learn.group"
LEARN_PENDING_MEMBER = "learn.pending-member"


@dataclass
class MidStream:
    """What the oracle knows of the groups it has not learned yet, and which it has."""

    learned: set[str] = field(default_factory=set)
    # Requests naming a group not learned yet, until answered.
    held: dict[Ref, Pending] = field(default_factory=dict)
    # Per group, the JoinGroup requests answered successfully, by the member id answered.
    joined: dict[str, dict[str, tuple[int, rq.JoinGroupRequest]]] = field(default_factory=dict)
    # Per group, the ids handed out with MEMBER_ID_REQUIRED, with when they expire unused.
    handed_out: dict[str, dict[str, int]] = field(default_factory=dict)

    def copy(self) -> MidStream:
        """An independent copy."""
        return MidStream(
            set(self.learned),
            dict(self.held),
            {group: dict(joins) for group, joins in self.joined.items()},
            {group: dict(ids) for group, ids in self.handed_out.items()},
        )

    def future_key(self) -> tuple[Any, ...]:
        """Everything that decides what is held and learned next (`held` in its order, which
        `after_learning` releases in)."""
        return (
            frozenset(self.learned),
            tuple(self.held.items()),
            frozenset((group, frozenset(joins.items())) for group, joins in self.joined.items()),
            frozenset((group, frozenset(ids.items())) for group, ids in self.handed_out.items()),
        )

    def holds(self, api_key: int, groups: frozenset[str]) -> bool:
        """Whether a request of `api_key` naming `groups` is held rather than judged."""
        return api_key == OFFSET_FETCH or not groups <= self.learned

    def handed_out_before(
        self, request: rq.Request, now: int, group: Group | None, spec_id: str
    ) -> bool:
        """Whether `request` is a JoinGroup presenting a member id the recording cannot have
        seen handed out (`learn.pending-member`): a learned group's member id unknown to it
        (`spec_id` in the specification's spelling), presented while an id given just before
        the recording began may still be pending."""
        return (
            isinstance(request, rq.JoinGroupRequest)
            and request.member_id != ""
            and group is not None
            and request.group_id in self.learned
            and now <= request.session_timeout_ms
            and not group.has_member(spec_id)
            and not group.is_pending_member(spec_id)
        )

    def release(self, ref: Ref) -> Pending | None:
        """The held request `ref` answers, if it was held (it no longer is)."""
        return self.held.pop(ref, None)

    def drop_connection(self, connection: str) -> None:
        """A connection closed: its held requests are owed nothing."""
        for ref in [r for r in self.held if r[0] == connection]:
            del self.held[ref]

    def learn(self, pending: Pending, body: dict[str, Any], now: int) -> Group | None:
        """The group a held request's observed response teaches (`learn.group`), if any."""
        request = pending.requests[0] if len(pending.requests) == 1 else None
        if (
            pending.api_key != JOIN_GROUP
            or not isinstance(request, rq.JoinGroupRequest)
            or request.group_id in self.learned
        ):
            return None
        generation = body.get("generation_id")
        member_id = body.get("member_id")
        if not isinstance(member_id, str):
            return None
        if body.get("error_code") == MEMBER_ID_REQUIRED:
            # A pending member, which the leader's member list will not show.
            expiry = pending.ts + request.session_timeout_ms
            self.handed_out.setdefault(request.group_id, {})[member_id] = expiry
            return None
        if body.get("error_code") != 0 or not isinstance(generation, int):
            return None
        joined = self.joined.setdefault(request.group_id, {})
        joined[member_id] = (generation, request)
        listed = body.get("members")
        # A static leader replaced in a Stable group (KIP-814) is shown the members too, with
        # skip_assignment: no join completed there.
        if not listed or not isinstance(listed, list) or body.get("skip_assignment"):
            return None
        group = self._group(request, body, generation, listed, now)
        if group is not None:
            self.learned.add(group.group_id)
            self.joined.pop(group.group_id, None)
            self.handed_out.pop(group.group_id, None)
        return group

    def after_learning(self, group_id: str, generation: int) -> list[Pending]:
        """The held requests of `group_id` that carry the learned `generation` (SyncGroup,
        Heartbeat, OffsetCommit sent once their member had the new generation, so after the
        join completed): no longer held, to be judged from the learned state."""
        released = []
        for ref, pending in list(self.held.items()):
            request = pending.requests[0] if len(pending.requests) == 1 else None
            if (
                pending.api_key != JOIN_GROUP
                and getattr(request, "group_id", None) == group_id
                and getattr(request, "generation_id", None) == generation
            ):
                released.append(self.held.pop(ref))
        return released

    def _group(
        self,
        request: rq.JoinGroupRequest,
        body: dict[str, Any],
        generation: int,
        listed: list[Any],
        now: int,
    ) -> Group | None:
        """The group as Kafka holds it right after the join the leader's response completes;
        None unless every listed member's JoinGroup request of this round was seen."""
        members = []
        for entry in listed:
            if not isinstance(entry, dict) or not isinstance(entry.get("member_id"), str):
                return None
            join = self._join_of(request.group_id, generation, entry)
            if join is None:
                return None
            members.append(
                member_of_join(
                    join, entry["member_id"], heartbeat_deadline_ms=now + join.session_timeout_ms
                )
            )
        group = Group(
            request.group_id,
            state=PREPARING_REBALANCE,
            generation_id=generation,
            protocol_type=body.get("protocol_type") or request.protocol_type,
            protocol_name=body.get("protocol_name"),
            leader_id=str(body.get("leader") or ""),
            members=tuple(sorted(members, key=lambda m: m.member_id)),
            pending_sync_members=frozenset(m.member_id for m in members),
            pending_members=tuple(
                PendingMember(member_id, expiry)
                for member_id, expiry in sorted(self.handed_out.get(request.group_id, {}).items())
                if member_id not in {m.member_id for m in members}
            ),
        )
        group = group.transition_to(COMPLETING_REBALANCE, now)
        return replace(
            group,
            subscribed_topics=compute_subscribed_topics(group),
            sync_timer=SyncTimer(now + group.rebalance_timeout_ms(), generation),
        )

    def _join_of(
        self, group_id: str, generation: int, entry: dict[str, Any]
    ) -> rq.JoinGroupRequest | None:
        """The listed member's JoinGroup request of this round: answered already (in this
        generation), or still waiting (by its member id, or a static member's instance id)."""
        member_id, instance = entry["member_id"], entry.get("group_instance_id")
        answered = self.joined.get(group_id, {}).get(member_id)
        if answered is not None and answered[0] == generation:
            return answered[1]
        for pending in self.held.values():
            join = pending.requests[0] if pending.api_key == JOIN_GROUP else None
            if not isinstance(join, rq.JoinGroupRequest) or join.group_id != group_id:
                continue
            if join.member_id == member_id or (
                instance is not None and join.member_id == "" and join.group_instance_id == instance
            ):
                return join
        return None
