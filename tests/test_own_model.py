"""`groupspec check --model package.module:factory`: a model not in the package, as
docs/extending.md ("Your own model") describes it, with its worked example
docs/examples/token_ring.py: it passes, and its seeded bug gives a shortest counterexample."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from groupspec.cli.main import main
from groupspec.models.factory_models import load_factory_model
from groupspec.models.parameters import documented
from groupspec.models.preset_models import ModelLoadError

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


@pytest.fixture
def examples_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))


def test_the_worked_example_passes(examples_on_path, capsys, tmp_path):
    out = tmp_path / "ring.json"
    argv = ["check", "--model", "token_ring:TokenRing", "--set", "nodes=4", "--json", str(out)]
    assert main([*argv, "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("token_ring:TokenRing with nodes=4: Mutual exclusion by a token")
    assert "  nodes = 4 (default: 3): processes in the ring" in printed
    assert "verdict: pass" in printed
    document = json.loads(out.read_text())
    assert document["parameters"] == {"nodes": 4, "enter_without_token": False}
    assert (document["verdict"], document["complete"]) == ("pass", True)
    # Worker processes explore the same states.
    assert main([*argv, "--quiet", "--workers", "2"]) == 0
    again = json.loads(out.read_text())
    assert (again["distinct_states"], again["transitions"]) == (
        document["distinct_states"],
        document["transitions"],
    )


def test_the_seeded_bug_gives_a_shortest_counterexample(examples_on_path, capsys):
    argv = ["check", "--model", "token_ring:TokenRing", "--set", "enter_without_token=true"]
    assert main([*argv, "--quiet"]) == 1
    printed = capsys.readouterr().out
    assert "invariant MutualExclusion violated: processes [0, 1] are all critical" in printed
    assert "shortest trace: 4 steps" in printed
    assert "Enter(1)" in printed and "verdict: fail" in printed


def test_the_command_the_docs_give_runs_as_written(tmp_path):
    # The way docs/extending.md runs it: PYTHONPATH names the example's directory.
    environment = {**os.environ, "PYTHONPATH": str(EXAMPLES)}
    command = [sys.executable, "-m", "groupspec.cli.main", "check"]
    done = subprocess.run(
        [*command, "--model", "token_ring:TokenRing", "--quiet"],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "verdict: pass" in done.stdout


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (
            ["--model", "no_such_module:Model"],
            "no module named 'no_such_module' on the Python path",
        ),
        (["--model", "token_ring"], "expected package.module:factory"),
        (["--model", "token_ring:Nothing"], "has no attribute 'Nothing'"),
        (["--model", "token_ring:Ring"], "its parameters refused {}: TypeError"),
        (["--model", "token_ring:_with"], "a factory takes no argument, or one argument"),
        (["--model", "token_ring:TokenRing", "--set", "nodes=7"], "must be between 2 and 6"),
        (["--model", "token_ring:TokenRing", "--set", "colour=red"], "unknown parameter"),
        (["--model", "token_ring:TokenRing", "--fault", "KAFKA-2555"], "--fault switches"),
        (["eager-2", "--model", "token_ring:TokenRing"], "a preset (eager-2) or --model"),
    ],
)
def test_a_bad_model_is_one_line_and_exit_2(examples_on_path, capsys, argv, words):
    assert main(["check", *argv]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and words in error, error


@dataclass(frozen=True)
class Size:
    """The parameters of a factory function below."""

    nodes: int = documented(2, "processes", minimum=2, maximum=6)


def ring_of(parameters: Size) -> object:
    """A factory function: its argument's annotation names its dataclass of parameters."""
    from token_ring import TokenRing  # type: ignore[import-not-found]

    return TokenRing(nodes=parameters.nodes)


def no_model() -> object:
    """A factory that returns something else than a model."""
    return 42


def test_factory_functions_with_and_without_parameters(examples_on_path):
    made = load_factory_model(f"{__name__}:ring_of", {"nodes": "5"})
    assert made.model.name == "token-ring-5" and made.parameters == {"nodes": 5}
    with pytest.raises(ModelLoadError, match="the factory takes no parameters"):
        load_factory_model(f"{__name__}:no_model", {"nodes": "5"})
    with pytest.raises(ModelLoadError, match="returned int, not a model"):
        load_factory_model(f"{__name__}:no_model")
