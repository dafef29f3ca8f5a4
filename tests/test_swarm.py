"""`groupspec swarm`: a violation a fault switch causes is reported with its counterexample and a
command that reproduces it; several local processes give what one gives."""

import json
import shlex

from swarm_support import FAULT_SPACE, TINY_SPACE

from groupspec.checker.bfs import Limits, search
from groupspec.cli.main import build_parser, main
from groupspec.coverage.presets import recorded
from groupspec.models.parameters import parse_set_options
from groupspec.models.preset_models import load_model
from groupspec.models.swarm_space import read_space
from groupspec.swarm.draw import draw
from groupspec.swarm.engines import check_locally


def test_a_fault_switch_is_found_with_a_counterexample_that_its_command_reproduces(
    tmp_path, capsys
):
    space = tmp_path / "fault.toml"
    space.write_text(FAULT_SPACE)
    out = tmp_path / "report.json"
    assert main(["swarm", str(space), "--runs", "5", "--json", str(out)]) == 1
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["verdict"] == "fail"
    assert report["exhausted"] and len(report["configurations"]) == 2
    verdicts = {tuple(c["overrides"].items()): c["verdict"] for c in report["configurations"]}
    assert verdicts == {
        (("max_generation", "1"), ("fault", "KAFKA-2555")): "fail",
        (("max_generation", "1"),): "incomplete",
    }
    (violation,) = report["violations"]
    assert violation["property"] == "NoZombieCommit" and violation["kind"] == "action"
    steps = len(violation["trace"])
    assert f"shortest trace: {steps} steps" in violation["text"]
    assert violation["text"] in printed
    assert f"fails; reproduce with: {violation['command']}" in printed
    assert "verdict: fail (1 failed, 1 incomplete, 0 passed of 2 configurations)" in printed
    # The command, run as `check` would run it, fails the same property the same way.
    args = build_parser().parse_args(shlex.split(violation["command"])[1:])
    loaded = load_model(args.preset, parse_set_options(args.overrides))
    result = search(loaded.model, limits=Limits(max_states=args.max_states))
    (found,) = result.problems
    assert found.problem.property_name == "NoZombieCommit"
    assert len(found.path) - 1 == steps
    assert [f"{fp & 0xFFFFFFFFFFFFFFFF:016x}" for fp in found.path] == violation["fingerprints"]
    # `groupspec replay` follows the report's counterexample with the current code.
    assert main(["replay", str(out)]) == 1
    assert "1/1 violations reproduced" in capsys.readouterr().out


def test_union_coverage_is_the_union_of_the_configurations_rules(tmp_path, capsys):
    space = tmp_path / "tiny.toml"
    space.write_text(TINY_SPACE)
    out = tmp_path / "report.json"
    assert main(["swarm", str(space), "--runs", "4", "--seed", "2", "--json", str(out)]) == 1
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    union = set().union(*(set(c["rules"]) for c in report["configurations"]))
    assert set(report["coverage"]["reached"]) == union
    assert not union & set(report["coverage"]["never_reached"])
    totals = report["coverage"]["totals"]
    reached = totals["coordinator"]["reached"] + totals["consumer"]["reached"]
    assert reached == len(union)
    assert f"union of 4 configurations: rules reached: {reached}/182" in printed
    beyond = report["coverage"]["beyond_reference_presets"]
    assert set(beyond) == union - recorded().union
    assert (
        f"reached beyond the {len(recorded().union)} rules the reference presets reach" in printed
    )
    assert sorted(c["verdict"] for c in report["configurations"]) == [
        "fail",
        "incomplete",
        "pass",
        "pass",
    ]


def test_two_local_processes_give_what_one_gives(tmp_path):
    space = tmp_path / "tiny.toml"
    space.write_text(TINY_SPACE)
    configurations = draw(read_space(space), 4, 2).configurations
    one = check_locally(configurations, workers=1)
    two = check_locally(configurations, workers=2)
    assert [r.configuration for r in two] == list(configurations)

    def figures(result):
        document = dict(result.document)
        # The timings differ from run to run, and with them the digests of the fields.
        for key in ("elapsed_s", "states_per_second", "digests"):
            document.pop(key)
        return (result.verdict, result.distinct_states, result.rules, result.violations, document)

    assert [figures(r) for r in two] == [figures(r) for r in one]


def test_liveness_is_checked_when_asked_and_its_violation_reported(tmp_path, capsys):
    space = tmp_path / "liveness.toml"
    space.write_text(
        '[swarm]\ndescription = "no pending-sync timer"\npreset = "eager-2"\n'
        "[budget]\nmax_states = 5000\n"
        '[parameters]\nevictions = [0]\ncommits = [0]\nfault = ["KAFKA-12890"]\n'
    )
    out = tmp_path / "report.json"
    # Safety holds under this fault: only Convergence (liveness) fails.
    assert main(["swarm", str(space), "--json", str(out)]) == 0
    assert "verdict: pass (0 failed" in capsys.readouterr().out
    assert main(["swarm", str(space), "--liveness", "--json", str(out)]) == 1
    printed = capsys.readouterr().out
    (violation,) = json.loads(out.read_text())["violations"]
    assert violation["property"] == "Convergence"
    assert violation["kind"] in ("goal-unreachable", "fair-cycle")
    assert violation["text"].startswith("liveness Convergence: fail")
    assert violation["text"] in printed
    assert "--no-liveness" not in violation["command"]


def test_a_configuration_its_budget_stopped_makes_the_swarm_incomplete_exit_3(tmp_path, capsys):
    # Issue 29: a swarm whose configurations all stopped at their budget passed nothing, so it
    # must not exit 0; it says which configuration stopped and at which limit.
    space = tmp_path / "budget.toml"
    space.write_text(
        '[swarm]\ndescription = "eager-2 cut short"\npreset = "eager-2"\n'
        "[budget]\nmax_states = 200\n"
        "[parameters]\nmax_generation = [1]\n"
    )
    out = tmp_path / "report.json"
    assert main(["swarm", str(space), "--json", str(out)]) == 3
    printed = capsys.readouterr().out
    assert (
        "incomplete: 1 of 1 configurations stopped at their budget (200 states) before "
        "exploring every state: #1 (max_states)"
    ) in printed
    assert "verdict: incomplete (0 failed, 1 incomplete, 0 passed" in printed
    assert json.loads(out.read_text())["verdict"] == "incomplete"
    # The same space with room for every state passes, and exits 0.
    space.write_text(space.read_text().replace("max_states = 200", "max_states = 100000"))
    assert main(["swarm", str(space)]) == 0
    assert "incomplete:" not in capsys.readouterr().out
