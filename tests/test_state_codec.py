"""How the Spark engine ships states: a vector of components, each encoded and interned once per
process, decoding to the same states (and keys) in another process's expander."""

from __future__ import annotations

import pytest

from groupspec.checker.expand import Expander
from groupspec.checker.spark.state_pickle import ComponentCodec
from groupspec.models.preset_models import load_model


def _some_states(expander: Expander[object], count: int) -> list[tuple[int, ...]]:
    """The first `count` states of a breadth-first walk, as vectors of ids."""
    frontier = [(key, ids) for key, ids, _ in expander.initial()]
    found, seen = [], set()
    while frontier and len(found) < count:
        following = []
        for key, ids in frontier:
            found.append(ids)
            batch = expander.expand_batch([(key, ids)], (), set())
            for position, target in enumerate(batch.targets):
                vector = batch.candidates.get(position)
                if vector is not None and target not in seen:
                    seen.add(target)
                    following.append((target, vector))
        frontier = following
    return found[:count]


def test_states_cross_processes_unchanged_and_are_interned_once() -> None:
    model = load_model("eager-2", {}).model
    sender, receiver = Expander(model), Expander(model)
    out = ComponentCodec(sender.values, sender.intern)
    back = ComponentCodec(receiver.values, receiver.intern)
    vectors = _some_states(sender, 200)
    decoded = [back.decode(out.encode(ids)) for ids in vectors]
    for sent, received in zip(vectors, decoded, strict=True):
        assert receiver.key(received) == sender.key(sent)
        assert receiver.values_of(received) == sender.values_of(sent)
    components = len(receiver.values)
    # A second delivery of the same states interns nothing new.
    assert [back.decode(out.encode(ids)) for ids in vectors] == decoded
    assert len(receiver.values) == components


def test_truncated_or_padded_bytes_are_refused() -> None:
    model = load_model("static-2", {}).model
    expander = Expander(model)
    codec = ComponentCodec(expander.values, expander.intern)
    ((_, ids, _),) = expander.initial()
    data = codec.encode(ids)
    fresh = ComponentCodec(expander.values, expander.intern)
    with pytest.raises(ValueError, match="bytes after its parts"):
        fresh.decode(data + b"\0")
    with pytest.raises(ValueError, match="end inside its parts"):
        fresh.decode(data[: len(data) // 2])
