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
An optimal model is turned back into an assignment by `stickiness_problem.assignment_from_counts`.
`optimal_stickiness_milp` solves the same problem with HiGHS, encoded independently; the property
tests hold the two to the same optimum.
"""

from __future__ import annotations

import time

import z3

from groupspec.spec.assignment import GroupAssignment, GroupSubscription
from groupspec.spec.assignors.owned_partitions import PreviousOwnership
from groupspec.spec.assignors.properties import partition_moves
from groupspec.spec.assignors.sticky import all_subscriptions_equal

from .stickiness_problem import (
    OptimalStickiness,
    StickinessOracleError,
    StickinessProblem,
    solved,
    stickiness_problem,
)

__all__ = ["OptimalStickiness", "StickinessOracleError", "optimal_stickiness", "stickiness_gap"]

DEFAULT_TIMEOUT_MS = 120_000


def optimal_stickiness(
    group: GroupSubscription,
    *,
    ownership: PreviousOwnership | None = None,
    timeout_ms: int | None = DEFAULT_TIMEOUT_MS,
) -> OptimalStickiness:
    """The fewest partition moves over all valid, complete, balanced assignments of `group` (z3).

    `ownership` defaults to `previous_owners(group)`. Raises `StickinessOracleError` when z3
    answers unknown (for instance after `timeout_ms`; None means no limit).
    """
    problem = stickiness_problem(group, ownership)
    optimizer = z3.Optimize()
    if timeout_ms is not None:
        optimizer.set("timeout", timeout_ms)
    identical = all_subscriptions_equal(group) and bool(problem.member_ids)
    build = _identical_model if identical else _general_model
    n, kept_terms, variables, constraints = build(optimizer, problem)

    started = time.perf_counter()
    verdict = optimizer.check()
    elapsed = time.perf_counter() - started
    if verdict == z3.unknown:
        raise StickinessOracleError(
            f"z3 returned unknown ({optimizer.reason_unknown()}) after {elapsed:.2f}s for "
            f"{len(problem.member_ids)} members and {len(problem.partitions)} partitions"
        )
    if verdict == z3.unsat:
        # A balanced assignment always exists (Kafka's own result is one); unsat is a bug here.
        raise StickinessOracleError("z3 found no valid, complete, balanced assignment")

    model = optimizer.model()
    counts = {key: model.eval(var, model_completion=True).as_long() for key, var in n.items()}
    kept = sum(model.eval(term, model_completion=True).as_long() for term in kept_terms)
    return solved(
        problem,
        counts,
        kept,
        solver="z3",
        variables=variables,
        constraints=constraints,
        seconds=elapsed,
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


def _identical_model(optimizer: z3.Optimize, problem: StickinessProblem) -> _Model:
    """Pure pseudo-Boolean model: u[m, t, r] ⇔ m gets at least r partitions of t."""
    member_ids, sizes = problem.member_ids, problem.sizes
    n: dict[tuple[str, str], z3.ArithRef] = {}
    kept_terms: list[z3.ArithRef] = []
    of_member: dict[str, list[z3.BoolRef]] = {mid: [] for mid in member_ids}
    variables = constraints = 0
    for topic, size in sizes.items():
        slots_of_topic: list[z3.BoolRef] = []
        for member_id in member_ids:
            if topic not in problem.takeable[member_id]:
                continue
            slots = [z3.Bool(f"u|{member_id}|{topic}|{r}") for r in range(1, size + 1)]
            for higher, lower in zip(slots[1:], slots, strict=False):
                optimizer.add(z3.Implies(higher, lower))  # order encoding: ≥ r+1 implies ≥ r
            constraints += size - 1
            n[member_id, topic] = z3.Sum([z3.If(slot, 1, 0) for slot in slots])
            slots_of_topic += slots
            of_member[member_id] += slots
            for r in range(problem.owned_count(member_id, topic)):
                bit = z3.Bool(f"k|{member_id}|{topic}|{r + 1}")
                optimizer.add(z3.Implies(bit, slots[r]))
                optimizer.add_soft(bit, 1)
                kept_terms.append(z3.If(bit, 1, 0))
                constraints += 1
            variables += size
        optimizer.add(z3.PbEq([(slot, 1) for slot in slots_of_topic], size))
        constraints += 1
    variables += len(kept_terms)
    low, extra = divmod(len(problem.partitions), len(member_ids))
    high = low + (1 if extra else 0)
    for member_id in member_ids:
        weighted = [(slot, 1) for slot in of_member[member_id]]
        optimizer.add(z3.PbGe(weighted, low), z3.PbLe(weighted, high))
        constraints += 2
    return n, kept_terms, variables, constraints


def _general_model(optimizer: z3.Optimize, problem: StickinessProblem) -> _Model:
    """Integer counts n[m, t], soft kept bits, and isBalanced per pair of members sharing a topic."""
    member_ids, sizes, takeable = problem.member_ids, problem.sizes, problem.takeable
    n: dict[tuple[str, str], z3.ArithRef] = {}
    kept_terms: list[z3.ArithRef] = []
    constraints = 0
    for topic, size in sizes.items():
        takers = problem.takers(topic)
        for member_id in takers:
            var = z3.Int(f"n|{member_id}|{topic}")
            n[member_id, topic] = var
            optimizer.add(var >= 0, var <= size)
            constraints += 2
            for slot in range(1, problem.owned_count(member_id, topic) + 1):
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
