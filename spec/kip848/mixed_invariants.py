"""Properties of a coordinator holding groups of both kinds (docs/protocol.md §12.15).

State invariants, in the style of `invariants.py`: a group id lives in one kind only, and a
partition has at most one owner whichever kind holds the group (in a consumer group, counting
partitions pending revocation and classic members alike; in a classic group, the assignments the
coordinator stores). And a transition property of conversions: what Kafka carries across an
upgrade or a downgrade is carried, and a refused conversion changes nothing.
"""

from __future__ import annotations

from collections import Counter

from ..consumer_protocol import SubscriptionDecodeError, decode_assignment
from ..invariants import Invariant
from ..state import Group
from .invariants import KIP848_INVARIANTS
from .mixed_state import GroupKind, MixedState, group_kinds_disjoint
from .state import ConsumerGroup


def classic_single_owner(state: MixedState) -> list[str]:
    """Violations of: in a classic group no partition is in two members' stored assignments."""
    problems = []
    for group in state.classic.groups:
        owners: Counter[object] = Counter()
        for member in group.members:
            if member.assignment == b"":
                continue
            try:
                partitions, _ = decode_assignment(member.assignment)
            except SubscriptionDecodeError:
                continue
            owners.update(set(partitions))
        problems += [
            f"classic group {group.group_id!r}: partition {p} is assigned to {n} members"
            for p, n in sorted(owners.items(), key=lambda item: str(item[0]))
            if n > 1
        ]
    return problems


def consumer_invariants(state: MixedState) -> list[str]:
    """The consumer-protocol invariants (SingleOwner first) over the consumer groups."""
    return [
        f"{inv.name}: {problem}"
        for inv in KIP848_INVARIANTS
        for problem in inv.check(state.consumer)
    ]


MIXED_INVARIANTS: tuple[Invariant[MixedState], ...] = (
    Invariant(
        "GroupKindsDisjoint",
        "A group id is held as a classic group or as a consumer group, never both.",
        group_kinds_disjoint,
    ),
    Invariant(
        "ClassicSingleOwner",
        "In a classic group, no partition is in two members' stored assignments.",
        classic_single_owner,
    ),
    Invariant(
        "ConsumerGroupInvariants",
        "Every consumer-protocol invariant (SingleOwner among them) holds for the consumer groups, classic members included.",
        consumer_invariants,
    ),
)


def check_mixed_state(state: MixedState) -> list[tuple[str, str]]:
    """Every (invariant name, violation) in `state`."""
    return [(inv.name, problem) for inv in MIXED_INVARIANTS for problem in inv.check(state)]


def conversion_violations(
    before: MixedState,
    after: MixedState,
    group_id: str,
    fenced: frozenset[str] = frozenset(),
) -> list[str]:
    """What a step from `before` to `after` broke of the conversion contract for `group_id`:
    an upgrade keeps each classic member (id, instance id) at its generation as its epoch with its
    stored assignment; a downgrade keeps each remaining classic member with the generation = the
    group epoch and its target as its assignment (a static classic member replacing the last
    consumer-protocol member takes the replaced member's place and target). `fenced` names the
    members the step's input may remove (the member whose timer fired, a leave's members): a
    downgrade that fences them keeps the others only. Other steps are not judged here."""
    was, now = before.kind_of(group_id), after.kind_of(group_id)
    if was is GroupKind.CLASSIC and now is GroupKind.CONSUMER:
        old = before.classic.group(group_id)
        new = after.consumer.group(group_id)
        assert old is not None and new is not None
        return _upgrade_violations(old, new) if old.members else []
    if was is GroupKind.CONSUMER and now is GroupKind.CLASSIC:
        old_group = before.consumer.group(group_id)
        new_group = after.classic.group(group_id)
        assert old_group is not None and new_group is not None
        # An Empty consumer group replaced by a classic join is no downgrade.
        if not old_group.members_by_id:
            return []
        return _downgrade_violations(old_group, new_group, fenced)
    return []


def _upgrade_violations(old: Group, new: ConsumerGroup) -> list[str]:
    problems = []
    for member in old.members:
        converted = new.member(member.member_id)
        if converted is None:
            problems.append(f"upgrade lost member {member.member_id}")
            continue
        if converted.instance_id != member.group_instance_id:
            problems.append(f"upgrade changed the instance id of {member.member_id}")
        if converted.classic is None:
            # the join that converted may be this member's own, with the consumer protocol
            continue
        if converted.member_epoch != old.generation_id:
            problems.append(
                f"upgrade put {member.member_id} at epoch {converted.member_epoch}, "
                f"not the generation {old.generation_id}"
            )
        stored = (
            frozenset(decode_assignment(member.assignment)[0]) if member.assignment else frozenset()
        )
        if converted.owned != stored:
            problems.append(
                f"upgrade gave {member.member_id} {sorted(map(str, converted.owned))}, "
                f"not its classic assignment {sorted(map(str, stored))}"
            )
    return problems


def _downgrade_violations(old: ConsumerGroup, new: Group, fenced: frozenset[str]) -> list[str]:
    problems = []
    if new.generation_id != old.group_epoch:
        problems.append(
            f"downgrade set generation {new.generation_id}, not the group epoch {old.group_epoch}"
        )
    # A static classic member that replaced the last consumer-protocol member joins the classic
    # group in the replaced member's place, with its target (ClassicGroup.fromConsumerGroup).
    replaced: dict[str, str] = {}
    for member in new.members:
        instance = member.group_instance_id
        holder = None if instance is None else old.static_member(instance)
        if member.member_id not in old.members and holder is not None:
            replaced[member.member_id] = holder.member_id
    classic_members = {
        m.member_id
        for m in old.iter_members()
        if m.uses_classic_protocol and m.member_id not in replaced.values()
    } | set(replaced)
    # consumerGroupFenceMembers converts the group without the members it fences.
    classic_members -= fenced - {m.member_id for m in new.members}
    kept = {m.member_id for m in new.members}
    if kept != classic_members:
        problems.append(
            f"downgrade kept members {sorted(kept)}, not the classic ones {sorted(classic_members)}"
        )
    for member in new.members:
        stored = (
            frozenset(decode_assignment(member.assignment)[0]) if member.assignment else frozenset()
        )
        if stored != old.target_of(replaced.get(member.member_id, member.member_id)):
            problems.append(
                f"downgrade gave {member.member_id} an assignment other than its target"
            )
    return problems
