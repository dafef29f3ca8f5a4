"""The steps of the abstract consumer-protocol group (spec/kip848/abstract_group.py): every step of
the KIP-848 coordinator must change the abstract group the way one of them does, or not at all
(docs/refinement.md, "The consumer protocol").

A coordinator step may combine several abstract steps of one member (a heartbeat that joins,
moves the group to a new target and reconciles the member at once) with the fencing of others (a
timer). What each may do:

- **join / subscribe**: a member appears, or changes its subscription; the group epoch moves on.
  A member that joins with, or changes to, a regular expression not resolved yet is
  *resolving*: the group epoch waits for the resolution, which moves it on when the expression's topics differ
  (`GroupMetadataManager.consumerGroupHeartbeat` bumps only for names or an expression already
  resolved), and the target, computed before, may give it topics outside its unsettled
  subscription.
- **leave / fence**: a member goes; what it owned is free; the group epoch moves on.
- **temporary leave** (static member, epoch -2) and **replacement**: a static member that left
  temporarily is replaced by a new member id with the same instance id, which inherits what it
  owned: the one way a partition passes from one member to another without being free between.
- **new target**: the target assignment changes only with a new target epoch, which is the group
  epoch; it gives each partition to at most one member, of a topic that member subscribes to
  (while the target lags behind the group epoch, a member may have dropped a topic since).
- **reconcile**: one member's epoch moves up, to the target epoch at most; it releases partitions,
  and takes only free partitions of its target, at the target epoch.

Ownership stays exclusive throughout: no partition ever has two owners.
"""

from __future__ import annotations

from groupspec.vocabulary.requests import TopicPartition

from .abstract_group import AbstractConsumerGroup, AbstractMember, abstract_groups
from .state import ConsumerGroupsState

_NO_GROUP = AbstractConsumerGroup("", 0, (), 0, (), ())


def refinement_problems(before: ConsumerGroupsState, after: ConsumerGroupsState) -> list[str]:
    """What the step from `before` to `after` does that no abstract step allows (empty when it
    refines the abstract group)."""
    if before == after:
        return []
    a_groups, b_groups = abstract_groups(before), abstract_groups(after)
    problems = []
    for group_id in sorted(set(a_groups) | set(b_groups)):
        a = a_groups.get(group_id, _NO_GROUP)
        b = b_groups.get(group_id)
        if b is None:
            if a.members:
                problems.append(f"group {group_id!r} vanished with members")
            continue
        if a != b:
            problems += [f"group {group_id!r}: {p}" for p in _group_step(a, b)]
    return problems


def _group_step(a: AbstractConsumerGroup, b: AbstractConsumerGroup) -> list[str]:
    problems = _well_formed(b)
    if b.epoch < a.epoch or b.target_epoch < a.target_epoch:
        problems.append(
            f"epochs went back: group {a.epoch} -> {b.epoch}, target {a.target_epoch} -> "
            f"{b.target_epoch}"
        )
    replaced = _replacements(a, b)
    successors = set(replaced.values())
    gone = {m.member_id for m in a.members} - {m.member_id for m in b.members} - set(replaced)
    new = {m.member_id for m in b.members} - {m.member_id for m in a.members} - successors
    # A member joining with an expression not resolved yet waits for its resolution too.
    new -= {m.member_id for m in b.members if m.resolving}
    changed_subscription = [
        m.member_id
        for m in b.members
        if (old := a.member(m.member_id)) is not None
        and old.subscription != m.subscription
        and not m.resolving
    ]
    if (gone or new or changed_subscription) and b.epoch <= a.epoch:
        problems.append(
            f"members joined {sorted(new)}, left {sorted(gone)} or changed their subscription "
            f"{changed_subscription} without a new group epoch ({a.epoch})"
        )
    problems += _target_step(a, b, gone, replaced)
    problems += _ownership_step(a, b, gone, replaced)
    return problems


def _well_formed(b: AbstractConsumerGroup) -> list[str]:
    problems = [f"{p} owned by {', '.join(owners)}" for p, owners in b.owners if len(owners) > 1]
    targeted: dict[TopicPartition, list[str]] = {}
    for member_id, partitions in b.target:
        member = b.member(member_id)
        if member is None:
            problems.append(f"target for {member_id}, not a member")
            continue
        # A target is computed from the subscriptions of its epoch: one lagging behind the group
        # epoch (KIP-1263's interval deferred it) may still give topics a member has since
        # dropped, which the member's reconciliation revokes (subscription_narrowed).
        outside = sorted(str(p) for p in partitions if p.topic not in member.subscription)
        # A target older than the group epoch predates the subscriptions it is owed for (a
        # resolution moved the epoch on; the next heartbeat computes the new target).
        if outside and not member.resolving and b.target_epoch == b.epoch:
            problems.append(f"target gives {member_id} {outside}, outside its subscription")
        for partition in partitions:
            targeted.setdefault(partition, []).append(member_id)
    problems += [
        f"target gives {p} to {', '.join(ids)}" for p, ids in targeted.items() if len(ids) > 1
    ]
    if b.target_epoch > b.epoch:
        problems.append(f"target epoch {b.target_epoch} ahead of the group epoch {b.epoch}")
    for member in b.members:
        if not member.away and member.epoch > b.target_epoch:
            problems.append(f"{member.member_id} at epoch {member.epoch}, past the target's")
    return problems


def _replacements(a: AbstractConsumerGroup, b: AbstractConsumerGroup) -> dict[str, str]:
    """Static members of `a` that left temporarily and are gone in `b`, to the new member id of
    `b` holding their instance id."""
    found = {}
    for old in a.members:
        if old.instance_id is None or b.member(old.member_id) is not None:
            continue
        successor = next((m for m in b.members if m.instance_id == old.instance_id), None)
        if successor is not None and a.member(successor.member_id) is None and old.away:
            found[old.member_id] = successor.member_id
    return found


def _target_step(
    a: AbstractConsumerGroup, b: AbstractConsumerGroup, gone: set[str], replaced: dict[str, str]
) -> list[str]:
    kept = {
        replaced.get(member_id, member_id): partitions
        for member_id, partitions in a.target
        if member_id not in gone
    }
    problems = []
    if kept != dict(b.target) and b.target_epoch <= a.target_epoch:
        problems.append(f"the target changed without a new target epoch ({a.target_epoch})")
    if b.target_epoch > a.target_epoch and b.target_epoch != b.epoch:
        problems.append(f"a new target at epoch {b.target_epoch}, not the group epoch {b.epoch}")
    return problems


def _ownership_step(
    a: AbstractConsumerGroup, b: AbstractConsumerGroup, gone: set[str], replaced: dict[str, str]
) -> list[str]:
    problems = []
    moved: set[str] = set()
    for partition in sorted({p for p, _ in a.owners} | {p for p, _ in b.owners}):
        was, now = _sole(a.owner_of(partition)), _sole(b.owner_of(partition))
        if was == now:
            continue
        if was is not None and now is not None:
            if replaced.get(was) != now:
                problems.append(f"{partition} passed from {was} to {now} without being released")
            continue
        if was is not None:
            if was not in gone:
                moved.add(replaced.get(was, was))
            continue
        assert now is not None
        taker = b.member(now)
        moved.add(now)
        if partition not in b.target_of(now):
            problems.append(f"{now} took {partition}, which its target does not hold")
        elif taker is not None and taker.epoch != b.target_epoch:
            problems.append(f"{now} took {partition} at epoch {taker.epoch}, not the target's")
    for member in b.members:
        old = a.member(member.member_id)
        if old is not None and old.epoch != member.epoch:
            moved.add(member.member_id)
            problems += _epoch_move(old, member)
    if len(moved) > 1:
        problems.append(f"several members reconciled in one step: {sorted(moved)}")
    return problems


def _epoch_move(old: AbstractMember, new: AbstractMember) -> list[str]:
    if new.away or old.away or new.epoch >= old.epoch:
        return []
    return [f"{new.member_id}'s epoch went back from {old.epoch} to {new.epoch}"]


def _sole(owners: tuple[str, ...]) -> str | None:
    # A partition with two owners is reported by _well_formed; here either one stands for it.
    return owners[0] if owners else None
