"""Hypothesis explores random request/event sequences; every invariant holds after every step."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from groupspec.models.preset_models import load_model, random_clients_preset_names
from groupspec.models.random_clients import ClientsState, RandomClientsWorld
from groupspec.spec.invariants import check_state, check_step


class CoordinatorUnderRandomClients(RuleBasedStateMachine):
    """Drives the spec through one of the random-clients presets, choosing actions and outcomes freely."""

    def __init__(self) -> None:
        super().__init__()
        self.world_model: RandomClientsWorld | None = None
        self.world: ClientsState | None = None

    @initialize(name=st.sampled_from(random_clients_preset_names()))
    def start(self, name: str) -> None:
        model = load_model(name).model
        assert isinstance(model, RandomClientsWorld)
        self.world_model = model
        self.world = self.world_model.initial()

    @rule(data=st.data())
    def take_an_action(self, data: st.DataObject) -> None:
        assert self.world_model is not None and self.world is not None
        actions = self.world_model.actions(self.world)
        action = data.draw(st.sampled_from(actions), label="action")
        outcomes = self.world_model.outcomes(self.world, action)
        outcome = data.draw(st.sampled_from(outcomes), label="outcome") if outcomes else None
        if outcome is not None:
            violations = check_step(
                self.world.coordinator, action.event, outcome.state, outcome.responses
            )
            assert not violations, violations
        self.world = self.world_model.apply(self.world, action, outcome)

    @invariant()
    def every_invariant_holds(self) -> None:
        if self.world is not None:
            violations = check_state(self.world.coordinator)
            assert not violations, violations


CoordinatorUnderRandomClients.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
TestCoordinatorUnderRandomClients = CoordinatorUnderRandomClients.TestCase
