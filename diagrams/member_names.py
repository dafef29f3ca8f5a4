"""Runs drawn with the member ids a coordinator really hands out.

The model checker's group world renumbers member ids after every step (`models.canonical`):
once a member is fenced and forgotten, its number is given to the next member of the same
prefix. That keeps the state space finite, but a diagram drawn from such a run shows a
restarted static member getting back the very id that was just fenced, which hides the
fencing the picture is meant to show. Before drawing, a run is therefore replayed in a copy of
the world that never renumbers: at each step, the step whose successor compacts to the drawn
run's successor. The steps are the same (same clients, same actions, same count), only the ids
are those a coordinator would have generated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from groupspec.checker.derived import transitions
from groupspec.checker.fingerprint import fingerprint
from groupspec.checker.model import Transition
from groupspec.models.canonical import compact_member_ids
from groupspec.models.group_world import GroupWorld
from groupspec.models.world_state import WorldState


def as_people_see_it(
    model: Any, initial: Any, steps: Sequence[Transition[Any]]
) -> tuple[Any, tuple[Transition[Any], ...]]:
    """The run `initial`, `steps` of `model` with real member ids, and the model it is a run of.

    A group world's run is replayed in the same world without member-id compaction; any other
    model's run, or a run that replay cannot follow, is returned as it is.
    """
    if not isinstance(model, GroupWorld) or not model.compact_ids:
        return model, tuple(steps)
    real = GroupWorld(model.parameters, model.name, compact_ids=False)
    replayed = _replay(real, initial, steps)
    return (real, replayed) if replayed is not None else (model, tuple(steps))


def _replay(
    real: GroupWorld, initial: WorldState, steps: Sequence[Transition[WorldState]]
) -> tuple[Transition[WorldState], ...] | None:
    """The steps of `real` that compact to `steps`, one by one (None where none does)."""
    state = initial
    replayed: list[Transition[WorldState]] = []
    for step in steps:
        wanted = fingerprint(step.state)
        match = next(
            (
                candidate
                for candidate in transitions(real, state)
                if candidate.action == step.action
                and fingerprint(compact_member_ids(candidate.state)) == wanted
            ),
            None,
        )
        if match is None:
            return None
        replayed.append(match)
        state = match.state
    return tuple(replayed)
