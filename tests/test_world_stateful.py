"""Hypothesis drives the whole closed world (coordinator + consumers + network + faults) step by
step, beyond the bounds the exhaustive check can afford, checking every property after every step."""

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from groupspec.checker.derived import (
    action_problems,
    action_properties,
    invariant_problems,
    invariants,
    is_end,
)
from groupspec.checker.derived import transitions as transitions_of
from groupspec.models.preset_models import load_model

# Beyond CI's exhaustive bounds: generation 4, more faults, more commits.
WIDE_BOUNDS = {
    "max_generation": "4",
    "commits": "3",
    "crashes": "2",
    "poll_timeouts": "1",
    "evictions": "2",
    "closes": "1",
}
WORLDS = {
    "eager-2": load_model("eager-2", WIDE_BOUNDS).model,
    "cooperative-3": load_model("cooperative-3", WIDE_BOUNDS).model,
    "mixed": load_model("mixed", {**WIDE_BOUNDS, "max_generation": "3"}).model,
}


class WholeWorld(RuleBasedStateMachine):
    """One walk through a world; Hypothesis picks which enabled step to take and shrinks failures."""

    def __init__(self) -> None:
        super().__init__()
        self.world = None
        self.state = None
        self.trace: list[str] = []

    @precondition(lambda self: self.world is None)
    @rule(name=st.sampled_from(sorted(WORLDS)))
    def start(self, name):
        self.world = WORLDS[name]
        self.state = self.world.initial_states()[0]
        self.trace = [f"start {name}"]

    @precondition(lambda self: self.world is not None)
    @rule(choice=st.integers(min_value=0, max_value=10_000))
    def take_a_step(self, choice):
        transitions = transitions_of(self.world, self.state)
        if not transitions:
            assert is_end(self.world, self.state), f"deadlock after {self.trace}"
            return
        step = transitions[choice % len(transitions)]
        for action_property in action_properties(self.world):
            problems = action_problems(self.world, action_property, self.state, step)
            assert not problems, (action_property.name, problems, [*self.trace, step.label])
        self.state = step.state
        self.trace.append(step.label)

    @invariant()
    def every_invariant_holds(self):
        if self.world is None:
            return
        for prop in invariants(self.world):
            problems = invariant_problems(self.world, prop, self.state)
            assert not problems, (prop.name, problems, self.trace)


WholeWorld.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestWholeWorld = WholeWorld.TestCase
