"""A client slot's identity: every field, `upgraded` included, tells states apart."""

from groupspec.checker.derived import transitions
from groupspec.checker.fingerprint import fingerprint
from groupspec.models.preset_models import load_model
from groupspec.models.world_state import evolve, part_digest


def test_a_slot_restarted_upgraded_is_a_different_state():
    world = load_model("admin-1").model
    (initial,) = world.initial_states()
    slot = initial.clients[0]
    upgraded = evolve(slot, upgraded=True)
    assert upgraded != slot
    assert part_digest(upgraded) != part_digest(slot)
    assert fingerprint(initial.with_client(0, upgraded)) != fingerprint(initial)


def test_a_crash_may_restart_the_client_as_it_was_or_upgraded():
    world = load_model("admin-1").model
    state = world.initial_states()[0]
    # Before the client has done anything, only an upgraded restart changes the state.
    crashes = [t for t in transitions(world, state) if t.action == "Crash"]
    assert [t.state.clients[0].upgraded for t in crashes] == [True]
    state = transitions(world, state)[0].state
    crashes = [t for t in transitions(world, state) if t.action == "Crash"]
    assert sorted(t.state.clients[0].upgraded for t in crashes) == [False, True]
    (upgraded,) = [t for t in crashes if t.state.clients[0].upgraded]
    assert upgraded.label.endswith("with cooperative-sticky+range")
