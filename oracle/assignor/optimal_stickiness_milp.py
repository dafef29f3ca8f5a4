"""The stickiness optimum as a mixed-integer linear program, solved by HiGHS (scipy.optimize.milp).

The same question `optimal_stickiness` asks z3 — the fewest partition moves over every valid,
complete assignment that is balanced in isBalanced's sense — encoded a second, independent way,
so that each solver checks the other (the property tests fail on any disagreement). HiGHS
answers in milliseconds where z3 takes seconds to minutes on uneven subscriptions
(`groupspec bench stickiness` reports both).

Variables, over the counting problem of `stickiness_problem` (partitions of a topic are
interchangeable up to who owned them):

- n[m, t] ∈ {0, …, |t|}, integer: how many partitions of topic t member m gets, for every topic
  m may take (no variable, hence no partition, for a topic m does not subscribe to);
- k[m, t] ∈ [0, owned[m, t]]: how many of the partitions of t that m owned it keeps, with
  k[m, t] ≤ n[m, t]; maximising Σ k makes k = min(owned, n), an integer, so k is left
  continuous (fewer integer variables to branch on);
- y[j, S] ∈ {0, 1}, only where a balance constraint is conditional, for a member j and a set S
  of topics it shares with some other member: Σ_{t ∈ S} n[j, t] ≤ |S| · y[j, S] (|S| the
  partitions of S), so y[j, S] = 1 whenever j holds a partition of S.

Constraints:

- completeness and disjointness: Σ_m n[m, t] = |t| for every topic;
- isBalanced, for every ordered pair (taker i, holder j) whose takeable topics overlap: if j
  holds a partition of a shared topic then c[j] ≤ c[i] + 1, with c[m] = Σ_t n[m, t]. When
  j's topics are a subset of i's, any partition j holds is one i could take, and the
  constraint is unconditional; otherwise, with S the shared topics,
  c[j] − c[i] ≤ 1 + M(1 − y[j, S]), M = (partitions j could hold) − 1, the smallest guard that
  is void when y[j, S] = 0. Under identical subscriptions the same condition is also stated per
  member, floor(P/N) ≤ c[m] ≤ ceil(P/N), which is equivalent but tightens the relaxation HiGHS
  branches on.

Objective: maximise Σ k; moves = previously owned − Σ k.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

from groupspec.spec.assignment import GroupSubscription
from groupspec.spec.assignors.owned_partitions import PreviousOwnership

from .stickiness_problem import (
    OptimalStickiness,
    StickinessOracleError,
    StickinessProblem,
    solved,
    stickiness_problem,
)

DEFAULT_TIME_LIMIT_S = 60.0


class _Columns:
    """Variable indices by name, with their bounds and integrality."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str, str], int] = {}
        self.lower: list[float] = []
        self.upper: list[float] = []

    def add(self, kind: str, member_id: str, topic: str, upper: int) -> int:
        self.index[kind, member_id, topic] = len(self.lower)
        self.lower.append(0.0)
        self.upper.append(float(upper))
        return self.index[kind, member_id, topic]

    def __len__(self) -> int:
        return len(self.lower)


class _Rows:
    """Sparse constraint rows: lower ≤ Σ coefficient · variable ≤ upper."""

    def __init__(self) -> None:
        self.terms: list[dict[int, float]] = []
        self.lower: list[float] = []
        self.upper: list[float] = []

    def add(self, terms: dict[int, float], lower: float, upper: float) -> None:
        self.terms.append(terms)
        self.lower.append(lower)
        self.upper.append(upper)

    def matrix(self, width: int) -> lil_matrix:
        matrix = lil_matrix((len(self.terms), width))
        for row, terms in enumerate(self.terms):
            for column, coefficient in terms.items():
                matrix[row, column] = coefficient
        return matrix


def _count_terms(columns: _Columns, problem: StickinessProblem, member_id: str) -> dict[int, float]:
    """c[member] = Σ_t n[member, t], as row terms."""
    return {columns.index["n", member_id, t]: 1.0 for t in sorted(problem.takeable[member_id])}


def _difference(plus: dict[int, float], minus: dict[int, float]) -> dict[int, float]:
    terms = dict(plus)
    for column, coefficient in minus.items():
        terms[column] = terms.get(column, 0.0) - coefficient
    return terms


def _build(problem: StickinessProblem) -> tuple[_Columns, _Rows]:
    columns, rows = _Columns(), _Rows()
    for topic, size in problem.sizes.items():
        for member_id in problem.takers(topic):
            columns.add("n", member_id, topic, size)
            owned = problem.owned_count(member_id, topic)
            if owned:
                kept = columns.add("k", member_id, topic, owned)
                rows.add({kept: 1.0, columns.index["n", member_id, topic]: -1.0}, -np.inf, 0.0)
        rows.add({columns.index["n", m, topic]: 1.0 for m in problem.takers(topic)}, size, size)
    if problem.member_ids and len(set(problem.takeable.values())) == 1:
        # Identical subscriptions: the pairwise bounds below say max − min ≤ 1, which is
        # floor(P/N) ≤ c ≤ ceil(P/N). Stating it per member as well tightens the LP relaxation
        # (without it HiGHS branches over symmetric members: seconds instead of milliseconds).
        low, extra = divmod(len(problem.partitions), len(problem.member_ids))
        for member_id in problem.member_ids:
            rows.add(_count_terms(columns, problem, member_id), low, low + (1 if extra else 0))
    for holder in problem.member_ids:
        for taker in problem.member_ids:
            shared = sorted(problem.takeable[taker] & problem.takeable[holder])
            if taker == holder or not shared:
                continue
            gap = _difference(
                _count_terms(columns, problem, holder), _count_terms(columns, problem, taker)
            )
            if problem.takeable[holder] <= problem.takeable[taker]:
                rows.add(gap, -np.inf, 1.0)
                continue
            # c[j] − c[i] never exceeds what j could hold at most: the smallest void-making M.
            big_m = float(sum(problem.sizes[t] for t in problem.takeable[holder]) - 1)
            key = ",".join(shared)
            held = columns.index.get(("y", holder, key))
            if held is None:
                held = columns.add("y", holder, key, 1)
                terms = {columns.index["n", holder, t]: 1.0 for t in shared}
                cap = float(sum(problem.sizes[t] for t in shared))
                rows.add({**terms, held: -cap}, -np.inf, 0.0)
            rows.add({**gap, held: big_m}, -np.inf, 1.0 + big_m)
    return columns, rows


def optimal_stickiness_milp(
    group: GroupSubscription,
    *,
    ownership: PreviousOwnership | None = None,
    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S,
) -> OptimalStickiness:
    """The fewest partition moves over all valid, complete, balanced assignments of `group` (HiGHS).

    Same contract as `optimal_stickiness` (z3); raises `StickinessOracleError` when HiGHS does
    not prove an optimum (for instance after `time_limit_s`; None means no limit).
    """
    problem = stickiness_problem(group, ownership)
    columns, rows = _build(problem)
    width = len(columns)
    objective = np.zeros(width)
    for (kind, _, _), column in columns.index.items():
        if kind == "k":
            objective[column] = -1.0  # milp minimises: maximise the partitions kept
    # k need not be integer: with n integer, the optimum puts it at min(owned, n), an integer.
    integrality = np.array([0.0 if kind == "k" else 1.0 for (kind, _, _) in columns.index])
    options: dict[str, float | bool] = {"disp": False}
    if time_limit_s is not None:
        options["time_limit"] = time_limit_s
    started = time.perf_counter()
    if width == 0:
        values = np.zeros(0)
    else:
        constraints = (
            [LinearConstraint(rows.matrix(width).tocsr(), rows.lower, rows.upper)]
            if rows.terms
            else []
        )
        result = milp(
            objective,
            integrality=integrality,
            bounds=Bounds(columns.lower, columns.upper),
            constraints=constraints,
            options=options,
        )
        if result.status != 0 or result.x is None:
            raise StickinessOracleError(
                f"HiGHS found no proven optimum ({result.message}) after "
                f"{time.perf_counter() - started:.2f}s for {len(problem.member_ids)} members "
                f"and {len(problem.partitions)} partitions"
            )
        values = np.rint(result.x)
    elapsed = time.perf_counter() - started
    counts = {
        (member_id, topic): int(values[column])
        for (kind, member_id, topic), column in columns.index.items()
        if kind == "n"
    }
    kept = sum(int(values[column]) for (kind, _, _), column in columns.index.items() if kind == "k")
    return solved(
        problem,
        counts,
        kept,
        solver="HiGHS",
        variables=width,
        constraints=len(rows.terms),
        seconds=elapsed,
    )
