"""The KIP-848 world's fault plug-ins (models/kip848_faults/): found by name, refused where they do
not belong, and off by default. That each is found by the checker with its property and length,
and that its bounds pass without it, is tests/test_bug_catalog.py's (the catalog holds them)."""

from __future__ import annotations

import pytest

from groupspec.cli.main import main
from groupspec.models.bugs import BUGS
from groupspec.models.kip848_faults import (
    KIP848_FAULT_SWITCHES,
    NO_KIP848_FAULT,
    FaultyCoordinator,
    kip848_fault,
)
from groupspec.models.kip848_params import Kip848Parameters
from groupspec.models.kip848_world import Kip848World
from groupspec.models.parameters import ParameterError
from groupspec.models.preset_models import ModelLoadError, load_model
from groupspec.spec.kip848 import ConsumerGroupCoordinatorSpec

KIP848_BUGS = ("KAFKA-16147", "KAFKA-19233", "KAFKA-19449", "KAFKA-20066", "KAFKA-20442")


def test_each_kip848_fault_is_in_the_catalog_with_a_kip848_preset() -> None:
    assert set(KIP848_BUGS) <= set(KIP848_FAULT_SWITCHES)
    catalog = {bug.name: bug for bug in BUGS}
    for name in KIP848_FAULT_SWITCHES:
        assert catalog[name].fault == name
        assert catalog[name].preset.startswith("kip848")


def test_the_world_steps_the_specified_coordinator_unless_a_fault_is_named() -> None:
    plain = Kip848World(Kip848Parameters())
    assert type(plain.coordinator) is ConsumerGroupCoordinatorSpec
    faulty = Kip848World(Kip848Parameters(fault="KAFKA-20442"))
    assert isinstance(faulty.coordinator, FaultyCoordinator)
    assert faulty.coordinator.fault is kip848_fault("KAFKA-20442")
    assert kip848_fault("") is NO_KIP848_FAULT


def test_a_classic_fault_is_refused_by_the_kip848_world_naming_the_key() -> None:
    with pytest.raises(ParameterError, match="fault"):
        Kip848Parameters(fault="KAFKA-2555")
    with pytest.raises(ModelLoadError, match="fault"):
        load_model("kip848-2", {"fault": "KAFKA-2555"})
    with pytest.raises(KeyError, match="KAFKA-16147"):
        kip848_fault("KAFKA-0")


def test_check_fault_knows_the_kip848_faults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "kip848-faults-1", "--fault", "KAFKA-20442"]) == 1
    out = capsys.readouterr().out
    assert "invariant EmptyEpochsAgree violated" in out
    assert "fault = KAFKA-20442" in out and "bumps the group epoch" in out
