"""Drawing N distinct configurations from a space, determined by a seed alone.

The combinations of a space (a preset and one value per parameter) are numbered in mixed
radix. A seeded random permutation of those numbers is walked lazily (`shuffled`): each number
is decoded into its combination, an impossible combination is skipped, and the first N possible
ones are the configurations. So the same seed draws the same configurations on any machine, and
`--runs 4` draws the first four of what `--runs 8` draws.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from groupspec.models.swarm_space import Budget, Space, parameters_with

from .configuration import Configuration

# Combinations looked at before drawing gives up on finding more possible ones.
MAX_EXAMINED = 100_000


@dataclass(frozen=True)
class Draw:
    """The configurations drawn, and how many combinations it took to find them."""

    configurations: tuple[Configuration, ...]
    examined: int
    impossible: int
    # Every combination of the space was examined (there are no more configurations).
    exhausted: bool


def shuffled(size: int, rng: random.Random) -> Iterator[int]:
    """The numbers 0 .. size-1 in a random order, each drawn when asked for (a Fisher-Yates
    shuffle over a sparse array, so a huge space costs nothing up front)."""
    moved: dict[int, int] = {}
    for position in range(size):
        chosen = rng.randrange(position, size)
        value = moved.get(chosen, chosen)
        if chosen != position:
            moved[chosen] = moved.get(position, position)
        moved.pop(position, None)
        yield value


def draw(
    space: Space, runs: int, seed: int, *, budget: Budget | None = None, liveness: bool = False
) -> Draw:
    """Up to `runs` distinct possible configurations of `space`, determined by `seed`; fewer
    when the space has fewer (or `MAX_EXAMINED` combinations yield fewer)."""
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    chosen: list[Configuration] = []
    examined = impossible = 0
    for number in shuffled(space.size, random.Random(seed)):
        if len(chosen) == runs or examined == MAX_EXAMINED:
            break
        examined += 1
        configuration = _configuration(
            space, number, len(chosen) + 1, budget or space.budget, liveness
        )
        if configuration is None:
            impossible += 1
        else:
            chosen.append(configuration)
    return Draw(tuple(chosen), examined, impossible, examined == space.size)


def _configuration(
    space: Space, number: int, ordinal: int, budget: Budget, liveness: bool
) -> Configuration | None:
    """Combination `number` of the space as configuration `ordinal`, or None if impossible."""
    number, which = divmod(number, len(space.presets))
    preset = space.presets[which]
    values: dict[str, object] = {}
    overrides: list[tuple[str, str]] = []
    for dimension in space.dimensions:
        number, index = divmod(number, len(dimension.values))
        value = dimension.values[index]
        values[dimension.key] = value
        if getattr(preset.parameters, dimension.key) != value:
            overrides.append((dimension.key, dimension.texts[index]))
    try:
        parameters_with(preset, values)
    except ValueError:  # ParameterError too
        return None
    return Configuration(ordinal, space.preset_names[which], tuple(overrides), budget, liveness)
