"""The channel that carries states between processes: what arrives equals what was sent,
shared parts travel once, and both ends can forget in step."""

import pickle
from dataclasses import dataclass
from enum import Enum

import pytest

from groupspec.checker.bfs import BATCH_SIZE, _chunks
from groupspec.checker.channel import Channel
from groupspec.checker.derived import transitions
from groupspec.models.presets import load_preset


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Leaf:
    colour: Colour
    label: str


@dataclass(frozen=True)
class Tree:
    leaves: tuple[Leaf, ...]
    count: int


def send(sender, receiver, states):
    data = sender.encode([sender.envelope(state) for state in states])
    return [receiver.open(envelope) for envelope in receiver.decode(data)], len(data)


def test_states_arrive_equal_and_parts_travel_once():
    main, worker = Channel(0), Channel(1)
    shared = Leaf(Colour.RED, "x" * 500)
    first = Tree((shared, Leaf(Colour.BLUE, "y")), 1)
    received, first_size = send(main, worker, [first])
    assert received == [first]
    second = Tree((shared,), 2)
    received, second_size = send(main, worker, [second])
    assert received == [second]
    assert second_size < 200 < first_size  # the long leaf was not sent again
    assert received[0].leaves[0].colour is Colour.RED


def test_parts_received_are_sent_back_by_number():
    main, worker = Channel(0), Channel(1)
    big = Leaf(Colour.RED, "z" * 1000)
    (at_worker,), _ = send(main, worker, [Tree((big,), 1)])
    # The worker builds a successor from the part it received and sends it back.
    (back,), size = send(worker, main, [Tree(at_worker.leaves, 2)])
    assert size < 200
    assert back.leaves[0] is big


def test_both_ends_reset_in_step():
    main, worker = Channel(0), Channel(1)
    leaf = Leaf(Colour.BLUE, "w" * 300)
    send(main, worker, [Tree((leaf,), 1)])
    main.reset()
    worker.reset()
    assert main.known_parts == worker.known_parts == 0
    (again,), size = send(main, worker, [Tree((leaf,), 3)])
    assert again == Tree((leaf,), 3)
    assert size > 300  # sent in full again


def test_plain_states_pass_through():
    main, worker = Channel(0), Channel(1)
    states = [(1, "a"), 7, ("nested", (Leaf(Colour.RED, "q"),))]
    received, _ = send(main, worker, states)
    assert received == states


def test_world_states_round_trip_with_their_fingerprint_texts():
    world = load_preset("static-2", {"max_generation": "1"})
    state = world.representative(world.initial_states()[0])
    states = [state]
    for transition in transitions(world, state):
        states.append(world.representative(transition.state))
    main, worker = Channel(0), Channel(1)
    received, size = send(main, worker, states)
    assert received == states
    assert [repr(s) for s in received] == [repr(s) for s in states]
    assert size < len(pickle.dumps(states))


def test_a_channel_end_is_main_or_worker():
    with pytest.raises(ValueError):
        Channel(2)


@pytest.mark.parametrize("size", [1, 7, 255, 256, 257, 1000, 5000])
@pytest.mark.parametrize("processes", [2, 3])
def test_chunks_cover_the_level_and_end_where_batches_end(size, processes):
    chunks = _chunks(size, processes)
    assert [start for start, _, _ in chunks] == [0] + [end for _, end, _ in chunks[:-1]]
    assert (chunks[-1][1] if chunks else 0) == size
    batch_ends = {end for start, end, last in chunks if last}
    assert batch_ends == {min(b + BATCH_SIZE, size) for b in range(0, size, BATCH_SIZE)}
    for start, end, _ in chunks:
        assert start // BATCH_SIZE == (end - 1) // BATCH_SIZE  # within one batch
