"""A property registered the documented way is checked: one deliberately failing canary per
model and per kind of property makes the check fail.

docs/extending.md says where each kind of property is registered. Before properties were
declared once, a world invariant added where the guide said was never checked (the engine read
a second list the guide did not mention) and the only test of the lists compared one with
another. These canaries run the real check on each registration: a property that is not
checked leaves its canary passing, and the test fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from canary_support import CANARY

from groupspec.checker.bfs import search
from groupspec.checker.check import check
from groupspec.checker.derived import PropertyDeclarationError, UndeclaredPropertyError
from groupspec.checker.model import (
    ActionProperty,
    Invariant,
    LivenessProperty,
    Part,
    Transition,
    TransitionGroup,
)
from groupspec.checker.plain import PlainModel
from groupspec.checker.walk import random_walks
from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World
from groupspec.models.preset_models import load_model
from groupspec.models.two_phase import TwoPhaseModel

SUPPORT = Path(__file__).with_name("canary_support.py")
# The smallest group-world preset that runs every kind of step a canary needs (a coordinator
# step, a leader's SyncGroup, a consumer step) and checks Convergence.
PRESET = "retention-1"


def _canary_check(kind: str) -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, str(SUPPORT), kind, PRESET],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_the_preset_passes_without_a_canary():
    assert check(load_model(PRESET).model).verdict == "pass"


@pytest.mark.parametrize(
    "kind",
    [
        "coordinator-invariant",
        "coordinator-action",
        "consumer-invariant",
        "consumer-action",
        "world-invariant",
        "world-action-coordinator-step",
        "world-action-leader-assignment",
        "world-liveness",
    ],
)
def test_a_group_world_checks_every_kind_of_property_registered_the_documented_way(kind):
    result = _canary_check(kind)
    assert result == {"verdict": "fail", "failed": [CANARY]}


# -- two-phase commit: a model of transition groups ---------------------------------------------


class TwoPhaseWithCanaries(TwoPhaseModel):
    """Two-phase commit with one canary of `kind` declared in `properties`."""

    def __init__(self, kind: str) -> None:
        super().__init__(3)
        object.__setattr__(self, "kind", kind)

    @property
    def properties(self):
        kind = self.kind  # type: ignore[attr-defined]
        if kind == "invariant":
            canary = Invariant(CANARY, "fails", parts=(Part((0,), lambda tm: ["fails"]),))
        elif kind == "action":
            canary = ActionProperty(CANARY, "fails")  # reported by the TM's steps below
        else:
            canary = LivenessProperty(CANARY, "never", goal=Part((0,), lambda tm: False))
        return (*super().properties, canary)

    @property
    def groups(self):
        (tm, *rms) = super().groups
        if self.kind != "action":  # type: ignore[attr-defined]
            return (tm, *rms)

        def reporting(*components):
            return [
                replace(step, findings=(*step.findings, (CANARY, "fails")))
                for step in tm.step(*components)
            ]

        return (TransitionGroup(tm.name, tm.reads, tm.writes, reporting), *rms)


@pytest.mark.parametrize("kind", ["invariant", "action", "liveness"])
def test_a_model_of_transition_groups_checks_every_kind_it_declares(kind):
    assert check(TwoPhaseModel(3)).verdict == "pass"
    result = check(TwoPhaseWithCanaries(kind))
    assert (result.verdict, result.failed) == ("fail", (CANARY,))


def test_a_finding_under_an_undeclared_name_is_refused():
    class Misspelt(TwoPhaseModel):
        @property
        def groups(self):
            (tm, *rms) = super().groups

            def misspelt(*components):
                return [
                    replace(step, findings=(("TMDecidesOnse", "typo"),))
                    for step in tm.step(*components)
                ]

            return (TransitionGroup(tm.name, tm.reads, tm.writes, misspelt), *rms)

    with pytest.raises(UndeclaredPropertyError, match="TMDecidesOnse"):
        search(Misspelt(3))


def test_an_action_property_a_model_of_groups_cannot_judge_is_refused():
    class Checked(TwoPhaseModel):
        @property
        def properties(self):
            return (*super().properties, ActionProperty(CANARY, "fails", lambda s, t: ["x"]))

    with pytest.raises(PropertyDeclarationError, match=CANARY):
        search(Checked(3))


# -- a plain model: one slot, steps as a function of the state ----------------------------------


@dataclass(frozen=True)
class Ring(PlainModel):
    """A counter going round 0, 1, 2 forever, with one canary of `kind`."""

    kind: str
    name = "ring"

    def initial_states(self):
        return (0,)

    def transitions(self, state):
        return (Transition("next", "next", (state + 1) % 3),)

    @property
    def properties(self):
        if self.kind == "invariant":
            return (Invariant(CANARY, "fails", lambda s: ["fails"] if s == 2 else []),)
        if self.kind == "action":
            return (
                ActionProperty(CANARY, "fails", lambda s, t: ["fails"] if t.state == 0 else []),
            )
        if self.kind == "liveness":
            return (
                LivenessProperty(
                    CANARY, "never", lambda s: False, fair_actions=frozenset({"next"})
                ),
            )
        return ()


@pytest.mark.parametrize("kind", ["invariant", "action", "liveness"])
def test_a_plain_model_checks_every_kind_it_declares(kind):
    assert check(Ring("none")).verdict == "pass"
    result = check(Ring(kind))
    assert (result.verdict, result.failed) == ("fail", (CANARY,))


# -- the KIP-848 world: coordinator invariants from their registry, its own properties ----------

TINY_KIP848 = Kip848Parameters(consumers=1, partitions=(1,), assignor="range")


class Kip848WithCanary(Kip848World):
    """The KIP-848 world with one canary of `kind` declared in its properties."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(TINY_KIP848)

    def _properties(self):
        canaries = {
            "invariant": Invariant(CANARY, "fails", lambda s: ["fails"]),
            "action": ActionProperty(CANARY, "fails", lambda s, t: ["fails"]),
            "liveness": LivenessProperty(
                CANARY, "never", lambda s: False, fair_actions=frozenset({"heartbeat"})
            ),
        }
        return (*super()._properties(), canaries[self.kind])


@pytest.mark.parametrize("kind", ["invariant", "action", "liveness"])
def test_the_kip848_world_checks_every_kind_it_declares(kind):
    assert check(Kip848World(TINY_KIP848)).verdict == "pass"
    result = check(Kip848WithCanary(kind))
    assert (result.verdict, result.failed) == ("fail", (CANARY,))


def test_the_kip848_world_checks_a_coordinator_invariant_added_to_its_registry(monkeypatch):
    from groupspec.spec.invariants import Invariant as SpecInvariant
    from groupspec.spec.kip848 import invariants

    canary = SpecInvariant(CANARY, "fails", lambda state: ["fails"])
    monkeypatch.setattr(invariants, "KIP848_INVARIANTS", (*invariants.KIP848_INVARIANTS, canary))
    result = check(Kip848World(TINY_KIP848))
    assert (result.verdict, result.failed) == ("fail", (CANARY,))


# -- random walks judge the same declarations ---------------------------------------------------


@pytest.mark.parametrize("kind", ["invariant", "action"])
def test_random_walks_judge_every_declared_property(kind):
    assert not random_walks(Ring("none"), seed=1, runs=1, steps=10).violations
    report = random_walks(Ring(kind), seed=1, runs=1, steps=10)
    assert [v.property_name for v in report.violations] == [CANARY]


def test_random_walks_judge_a_group_world_canary():
    world = TwoPhaseWithCanaries("invariant")
    report = random_walks(world, seed=1, runs=1, steps=5)
    assert [v.property_name for v in report.violations] == [CANARY]


def test_group_step_findings_reach_a_walk():
    report = random_walks(TwoPhaseWithCanaries("action"), seed=2, runs=3, steps=20)
    assert CANARY in {v.property_name for v in report.violations}
