"""The bug catalog: every fault switch is rediscovered, and the same bounds pass without it."""

from __future__ import annotations

import pytest

from groupspec.checker.bfs import Limits, search
from groupspec.cli.bugs_command import run_bug
from groupspec.cli.main import main
from groupspec.models.bugs import BUGS, Bug
from groupspec.models.catalog import ModelLoadError, load_model


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: bug.name)
def test_each_bug_is_found_with_its_property_and_length(bug: Bug) -> None:
    run = run_bug(bug)
    assert run.failed == (bug.property_name,)
    assert run.length == bug.counterexample_length


@pytest.mark.parametrize("bug", [b for b in BUGS if not b.expected], ids=lambda bug: bug.name)
def test_same_bounds_pass_without_the_fault(bug: Bug) -> None:
    overrides = {k: v for k, v in bug.overrides.items() if k != "check_convergence"}
    loaded = load_model(bug.preset, overrides)
    result = search(loaded.model, workers=1, limits=Limits())
    assert not result.problems


def test_unknown_fault_is_rejected_with_the_known_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "eager-2", "--fault", "KAFKA-0"]) == 2
    err = capsys.readouterr().err
    assert "unknown fault 'KAFKA-0'" in err and "KIP-429" in err
    with pytest.raises(ModelLoadError, match="unknown fault"):
        load_model("eager-2", {"fault": "nope"})


def test_check_with_fault_finds_the_bug() -> None:
    assert main(["check", "cooperative-3", "--set", "clients=2", "--fault", "KIP-429"]) == 1


def test_bugs_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bugs"]) == 0
    out = capsys.readouterr().out
    for bug in BUGS:
        assert bug.name in out
    assert "NO (" not in out
