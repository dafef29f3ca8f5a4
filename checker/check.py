"""A whole model check: the exhaustive search, then liveness on the explored graph, one verdict.

This is the operation `groupspec check` and the bug catalog run; the command line only parses
options and prints. The search engine is a parameter (the in-process engine by default, or any
callable with its signature, such as the Spark engine), so every engine feeds the same
liveness check and the same verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from .bfs import Limits, ProgressCallback, SearchResult, search
from .budget import TIME_LIMIT, Halt, deadline_after
from .derived import liveness_properties
from .interrupt import INTERRUPTED, LIVENESS, SearchInterrupted
from .liveness import OUT_OF_TIME, LivenessResult, check_liveness, unjudged
from .model import Model

S = TypeVar("S")


class SearchEngine(Protocol):
    """Something that explores a model exhaustively (the in-process engine, Spark, ...)."""

    def __call__(
        self,
        model: Model[Any],
        *,
        limits: Limits,
        progress: ProgressCallback | None,
        record_graph: bool,
    ) -> SearchResult[Any]: ...


def in_process(workers: int = 1) -> SearchEngine:
    """The in-process engine with `workers` processes."""

    def engine(
        model: Model[Any],
        *,
        limits: Limits,
        progress: ProgressCallback | None,
        record_graph: bool,
    ) -> SearchResult[Any]:
        return search(
            model, workers=workers, limits=limits, progress=progress, record_graph=record_graph
        )

    return engine


@dataclass(frozen=True)
class CheckResult(Generic[S]):
    """The search's result and each liveness property's, under one verdict."""

    search: SearchResult[S]
    liveness: tuple[LivenessResult, ...] = ()
    # Ctrl-C cut the check short (the search, or the liveness check after it).
    interrupted: bool = False

    @property
    def verdict(self) -> str:
        """ "fail" when any property failed (safety or liveness), "pass" when the space was
        exhausted and everything held, else "incomplete"."""
        if self.search.problems or any(item.verdict == "fail" for item in self.liveness):
            return "fail"
        if self.interrupted or self.search.stopped_by is not None:
            # A stopped search, or a whole one whose liveness check the time limit cut.
            return "incomplete"
        return self.search.verdict

    @property
    def failed(self) -> tuple[str, ...]:
        """The names of the properties that failed, safety first, each once."""
        names = [found.problem.property_name for found in self.search.problems]
        names += [item.property_name for item in self.liveness if item.verdict == "fail"]
        return tuple(dict.fromkeys(names))


def check(
    model: Model[S],
    *,
    limits: Limits | None = None,
    liveness: bool = True,
    engine: SearchEngine | None = None,
    progress: Callable[..., None] | None = None,
) -> CheckResult[S]:
    """Check every property of `model`: safety during the search, then (unless `liveness` is
    false or the model declares none) its liveness properties on the recorded graph.

    A time limit bounds the whole check: the search, then the liveness check, whose
    properties are inconclusive when the limit runs out first. Ctrl-C raises
    `SearchInterrupted` with what the search explored (see `interrupt.py`)."""
    limits = limits or Limits()
    halt = Halt(deadline_after(limits.max_seconds, time.monotonic()))
    live = liveness and bool(liveness_properties(model))
    explore = engine if engine is not None else in_process()
    result = explore(model, limits=limits, progress=progress, record_graph=live)
    try:
        if not live:
            return CheckResult(result)
        if result.stopped_by == TIME_LIMIT:
            names = (prop.name for prop in liveness_properties(model))
            return CheckResult(result, tuple(unjudged(name, OUT_OF_TIME) for name in names))
        judged = check_liveness(model, result, halt)
        if any(item.reason == OUT_OF_TIME for item in judged):
            # The search was whole, but the check was not.
            result.stopped_by = TIME_LIMIT
        return CheckResult(result, judged)
    except KeyboardInterrupt:
        # `complete` still says whether the search was exhaustive; the check was not.
        result.stopped_by = result.stopped_by or INTERRUPTED
        raise SearchInterrupted(result, LIVENESS) from None
