"""Classes built millions of times write their fields directly instead of using the generated
frozen __init__; their __init__ must take exactly the fields, with the same defaults."""

import dataclasses
import inspect

import pytest

from groupspec.checker.model import Transition
from groupspec.models.two_phase import TwoPhaseState
from groupspec.models.world_state import ClientSlot


@pytest.mark.parametrize("kind", [Transition, TwoPhaseState, ClientSlot])
def test_hand_written_init_matches_the_fields(kind):
    parameters = list(inspect.signature(kind.__init__).parameters.values())[1:]
    fields = dataclasses.fields(kind)
    assert [p.name for p in parameters] == [f.name for f in fields]
    for parameter, field in zip(parameters, fields, strict=True):
        expected = (
            inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
        )
        assert parameter.default == expected


def test_hand_written_init_keeps_the_dataclass_behaviour():
    state = TwoPhaseState((), "init")
    step = Transition("label", "action", state)
    assert step == Transition(label="label", action="action", state=state, rules=())
    assert hash(step) == hash(Transition("label", "action", state))
    assert dataclasses.replace(step, label="other").label == "other"
    assert repr(step).startswith("Transition(label='label'")
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.label = "changed"  # type: ignore[misc]
