"""The fewest partition moves any valid, complete, balanced assignment needs: an exact oracle (z3).

Kafka's sticky assignors promise balance first and then "as many existing assignments as
possible". On the constrained path (identical subscriptions) the second promise is easy to state
and `spec.assignors.properties` asserts it; on the general path nothing short of search says what
"possible" is. This module finds it: the minimum of `partition_moves` over every assignment that

- gives every existing partition of every subscribed topic to exactly one member subscribed to it,
- is balanced in the sense of AbstractStickyAssignor's isBalanced: whenever member j holds a
  partition member i could take, count(j) ≤ count(i) + 1 (under identical subscriptions that is
  max − min ≤ 1),

with previous ownership taken from the members' owned partitions and generations exactly as the
sticky assignors read them (`previous_owners`, KIP-792 rules). `stickiness_gap` is an
assignment's moves minus that optimum: 0 means nothing stickier was possible.

Encoding. Partitions of one topic differ only in who owned them, so the models count rather than
name them. (A Boolean per (member, partition) spends z3's time on interchangeable partitions:
measured 0.1–24 s on 10 × 100 identical subscriptions and over two minutes on uneven ones.)
- Identical subscriptions (`_identical_model`, pure pseudo-Boolean): order-encoded Booleans
  u[m, t, r] ⇔ "m gets at least r partitions of t" (u[r+1] → u[r]); PbEq per topic (complete and
  disjoint); PbGe/PbLe per member for floor(P/N) ≤ count ≤ ceil(P/N), which is exactly
  max − min ≤ 1; a soft Boolean k[m, t, r] → u[m, t, r] per previously owned slot.
- Otherwise (`_general_model`): integers n[m, t] ∈ [0, |t|] per member and topic it may take,
  Σ_m n[m, t] = |t|; soft k[m, t, r] ⇔ n[m, t] ≥ r per owned slot; count c[m] = Σ_t n[m, t];
  isBalanced as one constraint per ordered pair (i, j) sharing a topic: c[j] ≤ c[i] + 1 if j
  holds a partition of a shared topic — unconditional when j's topics are a subset of i's (any
  partition j holds, i could take), else guarded by Or(n[j, t] ≥ 1 for shared t).
- Objective: the most soft kept slots (core-guided MaxSAT); moves = previously owned − kept.
  No variable exists for an ineligible pair, so subscriptions need no constraint.
An optimal model is turned back into an assignment: each member keeps its lowest-numbered owned
partitions of t up to min(owned, n), and takes the rest of its n[m, t] from the partitions of t
nobody keeps, in order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import z3

from groupspec.spec.assignment import GroupAssignment, GroupSubscription, TopicPartition
from groupspec.spec.assignors.owned_partitions import PreviousOwnership, previous_owners
from groupspec.spec.assignors.properties import partition_moves
from groupspec.spec.assignors.sticky import all_subscriptions_equal


class StickinessOracleError(RuntimeError):
    """z3 could not decide the optimum (unknown, e.g. a timeout) or found no balanced assignment."""


@dataclass(frozen=True)
class OptimalStickiness:
    """The optimum, one assignment reaching it, and what solving it took."""

    optimum_moves: int
    assignment: GroupAssignment
    previously_owned: int
    variables: int
    constraints: int
    solve_seconds: float


DEFAULT_TIMEOUT_MS = 120_000


def optimal_stickiness(
    group: GroupSubscription,
    *,
    ownership: PreviousOwnership | None = None,
    timeout_ms: int | None = DEFAULT_TIMEOUT_MS,
) -> OptimalStickiness:
    """The fewest partition moves over all valid, complete, balanced assignments of `group`.

    `ownership` defaults to `previous_owners(group)`. Raises `StickinessOracleError` when z3
    answers unknown (for instance after `timeout_ms`; None means no limit).
    """
    ownership = previous_owners(group) if ownership is None else ownership
    member_ids = group.member_ids
    topics_of = {member.member_id: set(member.subscription.topics) for member in group.members}
    partitions = group.subscribed_partitions
    sizes: dict[str, int] = {}
    for partition in partitions:
        sizes[partition.topic] = sizes.get(partition.topic, 0) + 1
    owned: dict[tuple[str, str], list[TopicPartition]] = {}
    for partition, member_id in ownership.owner:
        if partition.topic in sizes and partition.topic in topics_of.get(member_id, ()):
            owned.setdefault((member_id, partition.topic), []).append(partition)

    optimizer = z3.Optimize()
    if timeout_ms is not None:
        optimizer.set("timeout", timeout_ms)
    identical = all_subscriptions_equal(group) and bool(member_ids)
    build = _identical_model if identical else _general_model
    n, kept_terms, variables, constraints = build(
        optimizer, member_ids, topics_of, sizes, owned, len(partitions)
    )

    started = time.perf_counter()
    verdict = optimizer.check()
    elapsed = time.perf_counter() - started
    if verdict == z3.unknown:
        raise StickinessOracleError(
            f"z3 returned unknown ({optimizer.reason_unknown()}) after {elapsed:.2f}s for "
            f"{len(member_ids)} members and {len(partitions)} partitions"
        )
    if verdict == z3.unsat:
        # A balanced assignment always exists (Kafka's own result is one); unsat is a bug here.
        raise StickinessOracleError("z3 found no valid, complete, balanced assignment")

    model = optimizer.model()
    chosen: dict[str, list[TopicPartition]] = {member_id: [] for member_id in member_ids}
    for topic in sizes:
        takers = [member_id for member_id in member_ids if (member_id, topic) in n]
        wanted = {mid: model.eval(n[mid, topic], model_completion=True).as_long() for mid in takers}
        taken: set[TopicPartition] = set()
        for member_id in takers:
            keep = sorted(owned.get((member_id, topic), ()))[: wanted[member_id]]
            chosen[member_id].extend(keep)
            taken.update(keep)
        pool = iter(p for p in partitions if p.topic == topic and p not in taken)
        for member_id in takers:
            for _ in range(
                wanted[member_id] - sum(1 for p in chosen[member_id] if p.topic == topic)
            ):
                chosen[member_id].append(next(pool))
    assignment = GroupAssignment.of(chosen)
    moves = partition_moves(ownership, assignment)
    kept = sum(model.eval(term, model_completion=True).as_long() for term in kept_terms)
    if moves != len(ownership.owner) - kept:
        raise StickinessOracleError(
            f"internal: the rebuilt assignment moves {moves} partitions, the model says "
            f"{len(ownership.owner) - kept}"
        )
    return OptimalStickiness(
        optimum_moves=moves,
        assignment=assignment,
        previously_owned=len(ownership.owner),
        variables=variables,
        constraints=constraints,
        solve_seconds=elapsed,
    )


def stickiness_gap(
    group: GroupSubscription,
    assignment: GroupAssignment,
    *,
    optimum: OptimalStickiness | None = None,
) -> int:
    """The assignment's partition moves minus the fewest any valid, complete, balanced assignment needs.

    Negative only when the assignment itself is not both complete and balanced (it then escapes
    constraints the optimum obeys).
    """
    optimum = optimal_stickiness(group) if optimum is None else optimum
    return partition_moves(group, assignment) - optimum.optimum_moves


_Model = tuple[dict[tuple[str, str], z3.ArithRef], list[z3.ArithRef], int, int]


def _identical_model(
    optimizer: z3.Optimize,
    member_ids: tuple[str, ...],
    topics_of: dict[str, set[str]],
    sizes: dict[str, int],
    owned: dict[tuple[str, str], list[TopicPartition]],
    total: int,
) -> _Model:
    """Pure pseudo-Boolean model: u[m, t, r] ⇔ m gets at least r partitions of t."""
    n: dict[tuple[str, str], z3.ArithRef] = {}
    kept_terms: list[z3.ArithRef] = []
    of_member: dict[str, list[z3.BoolRef]] = {mid: [] for mid in member_ids}
    variables = constraints = 0
    for topic, size in sizes.items():
        slots_of_topic: list[z3.BoolRef] = []
        for member_id in member_ids:
            if topic not in topics_of[member_id]:
                continue
            slots = [z3.Bool(f"u|{member_id}|{topic}|{r}") for r in range(1, size + 1)]
            for higher, lower in zip(slots[1:], slots, strict=False):
                optimizer.add(z3.Implies(higher, lower))  # order encoding: ≥ r+1 implies ≥ r
            constraints += size - 1
            n[member_id, topic] = z3.Sum([z3.If(slot, 1, 0) for slot in slots])
            slots_of_topic += slots
            of_member[member_id] += slots
            for r in range(len(owned.get((member_id, topic), ()))):
                bit = z3.Bool(f"k|{member_id}|{topic}|{r + 1}")
                optimizer.add(z3.Implies(bit, slots[r]))
                optimizer.add_soft(bit, 1)
                kept_terms.append(z3.If(bit, 1, 0))
                constraints += 1
            variables += size
        optimizer.add(z3.PbEq([(slot, 1) for slot in slots_of_topic], size))
        constraints += 1
    variables += len(kept_terms)
    low, extra = divmod(total, len(member_ids))
    high = low + (1 if extra else 0)
    for member_id in member_ids:
        weighted = [(slot, 1) for slot in of_member[member_id]]
        optimizer.add(z3.PbGe(weighted, low), z3.PbLe(weighted, high))
        constraints += 2
    return n, kept_terms, variables, constraints


def _general_model(
    optimizer: z3.Optimize,
    member_ids: tuple[str, ...],
    topics_of: dict[str, set[str]],
    sizes: dict[str, int],
    owned: dict[tuple[str, str], list[TopicPartition]],
    total: int,
) -> _Model:
    """Integer counts n[m, t], soft kept bits, and isBalanced per pair of members sharing a topic."""
    n: dict[tuple[str, str], z3.ArithRef] = {}
    kept_terms: list[z3.ArithRef] = []
    constraints = 0
    for topic, size in sizes.items():
        takers = [member_id for member_id in member_ids if topic in topics_of[member_id]]
        for member_id in takers:
            var = z3.Int(f"n|{member_id}|{topic}")
            n[member_id, topic] = var
            optimizer.add(var >= 0, var <= size)
            constraints += 2
            for slot in range(1, len(owned.get((member_id, topic), ())) + 1):
                bit = z3.Bool(f"k|{member_id}|{topic}|{slot}")
                optimizer.add(bit == (var >= slot))
                optimizer.add_soft(bit, 1)
                kept_terms.append(z3.If(bit, 1, 0))
                constraints += 1
        optimizer.add(z3.Sum([n[member_id, topic] for member_id in takers]) == size)
        constraints += 1
    count: dict[str, z3.ArithRef] = {}
    for member_id in member_ids:
        terms = [n[member_id, topic] for topic in sizes if (member_id, topic) in n]
        count[member_id] = z3.Sum(terms) if terms else z3.IntVal(0)
    takeable = {mid: {t for t in topics_of[mid] if t in sizes} for mid in member_ids}
    for taker in member_ids:
        for holder in member_ids:
            shared = sorted(takeable[taker] & takeable[holder])
            if taker == holder or not shared:
                continue
            bound = count[holder] <= count[taker] + 1
            if takeable[holder] <= takeable[taker]:
                # Anything the holder has, the taker could take: the bound is unconditional.
                optimizer.add(bound)
            else:
                held = z3.Or([n[holder, topic] >= 1 for topic in shared])
                optimizer.add(z3.Implies(held, bound))
            constraints += 1
    return n, kept_terms, len(n) + len(kept_terms), constraints
