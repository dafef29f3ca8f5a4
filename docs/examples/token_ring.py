"""A token ring for mutual exclusion: the worked example of docs/extending.md, "Your own model".

`nodes` processes sit in a ring and share one token. A process that wants the critical section
waits until the token reaches it, enters, and passes the token on when it leaves; a process
holding the token that does not want it passes it on at once. Mutual exclusion holds because
only the token's holder enters. The seeded bug `enter_without_token` lets a waiting process
enter while another holds the token, which breaks it.

Check it from the repository's root (the module is found on PYTHONPATH):

    PYTHONPATH=docs/examples groupspec check --model token_ring:TokenRing --set nodes=4
    PYTHONPATH=docs/examples groupspec check --model token_ring:TokenRing \\
        --set enter_without_token=true
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from groupspec.checker.model import Invariant, Transition
from groupspec.checker.plain import PlainModel
from groupspec.models.parameters import check_ranges, documented

IDLE, WAITING, CRITICAL = "idle", "waiting", "critical"


@dataclass(frozen=True)
class Ring:
    """A state: each process's phase, and which process holds the token."""

    phases: tuple[str, ...]
    token: int


@dataclass(frozen=True)
class TokenRing(PlainModel[Ring]):
    """Mutual exclusion by a token passed around a ring of processes.

    The dataclass is both the parameters (`--set nodes=4`) and the model: `groupspec check
    --model token_ring:TokenRing` builds it from the `--set` values.
    """

    nodes: int = documented(3, "processes in the ring", minimum=2, maximum=6)
    enter_without_token: bool = documented(
        False, "seeded bug: a waiting process enters without the token"
    )

    def __post_init__(self) -> None:
        check_ranges(self)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"token-ring-{self.nodes}"

    def initial_states(self) -> Sequence[Ring]:
        """Every process idle, the token at process 0."""
        return (Ring((IDLE,) * self.nodes, 0),)

    def transitions(self, state: Ring) -> Sequence[Transition[Ring]]:
        """Each process may ask, enter (with the token), leave, or pass the token on."""
        steps: list[Transition[Ring]] = []
        for node, phase in enumerate(state.phases):
            if phase == IDLE:
                steps.append(Transition(f"Ask({node})", "Ask", _with(state, node, WAITING)))
            elif phase == WAITING and (state.token == node or self.enter_without_token):
                steps.append(Transition(f"Enter({node})", "Enter", _with(state, node, CRITICAL)))
            elif phase == CRITICAL:
                left = _with(state, node, IDLE)
                steps.append(Transition(f"Leave({node})", "Leave", _passed(left, node)))
        holder = state.token
        if state.phases[holder] == IDLE:
            steps.append(Transition(f"Pass({holder})", "Pass", _passed(state, holder)))
        return steps

    @property
    def properties(self) -> tuple[Invariant[Ring], ...]:  # type: ignore[override]
        return (Invariant("MutualExclusion", "at most one process is critical", _exclusion),)


def _with(state: Ring, node: int, phase: str) -> Ring:
    phases = list(state.phases)
    phases[node] = phase
    return Ring(tuple(phases), state.token)


def _passed(state: Ring, holder: int) -> Ring:
    return Ring(state.phases, (holder + 1) % len(state.phases))


def _exclusion(state: Ring) -> list[str]:
    critical = [node for node, phase in enumerate(state.phases) if phase == CRITICAL]
    return [f"processes {critical} are all critical"] if len(critical) > 1 else []
