"""Swarm spaces and the drawing: every shipped space loads, a bad space is refused with one line
naming the file and the key before any work, and the drawing is a function of the seed."""

import random
import shlex

import pytest

from groupspec.cli.main import build_parser, main
from groupspec.models.parameters import parse_set_options
from groupspec.models.preset_models import load_model
from groupspec.models.swarm_space import (
    SpaceError,
    read_space,
    space_names,
)
from groupspec.swarm.draw import draw, shuffled

HEAD = '[swarm]\ndescription = "a test space"\npreset = "eager-2"\n[budget]\nmax_states = 100\n'


def _space(tmp_path, text, name="space.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_default_space_is_shipped_and_every_space_loads():
    assert "default" in space_names()
    for name in space_names():
        space = read_space(name)
        assert space.description and space.presets and space.size > 1
        assert space.budget.max_states or space.budget.max_seconds


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("[swarm\n", "", "malformed TOML"),
        (HEAD + "[params]\n", "params", "unknown table"),
        (HEAD.replace("preset =", "presets ="), "[swarm] presets", "unknown key"),
        (HEAD.replace('description = "a test space"\n', ""), "[swarm] description", "expected"),
        ('[swarm]\ndescription = "x"\npreset = "eager-2"\n', "[budget]", "missing"),
        (HEAD.replace("max_states = 100", ""), "[budget]", "needs max_states"),
        (HEAD.replace("100", "0"), "[budget] max_states", "at least 1"),
        (HEAD + 'max_seconds = "ten"\n', "[budget] max_seconds", "a positive number"),
        (HEAD.replace('"eager-2"', '"nope"'), "[swarm] preset", "no preset named 'nope'"),
        (HEAD.replace('"eager-2"', '["eager-2", "eager-2"]'), "[swarm] preset", "repeat"),
        (HEAD.replace('"eager-2"', '"three-clients"'), "[swarm] preset", "random-clients"),
        (HEAD.replace('"eager-2"', '["eager-2", "two-phase"]'), "[swarm] preset", "mixes kinds"),
        (HEAD + "[parameters]\nclient = [2]\n", "[parameters] client", "unknown parameter"),
        (HEAD + '[parameters]\nclients = ["two"]\n', "[parameters] clients", "expected int"),
        (
            HEAD + "[parameters]\nclients = [2, 9]\n",
            "[parameters] clients",
            "must be between 1 and 4, got 9",
        ),
        (HEAD + '[parameters]\nfault = ["KAFKA-1"]\n', "[parameters] fault", "unknown fault"),
        (HEAD + "[parameters]\nclients = []\n", "[parameters] clients", "a list of values"),
        (HEAD + "[parameters]\nclients = 2\n", "[parameters] clients", "a list of values"),
        (HEAD + "[parameters]\nevictions = [0, 0]\n", "[parameters] evictions", "repeats"),
        (
            HEAD + "[parameters]\nclients = { min = 3, max = 1 }\n",
            "[parameters] clients",
            "an empty range",
        ),
        (HEAD + "[parameters]\nclients = { min = 1 }\n", "[parameters] clients", "a range is"),
        (
            HEAD + "[parameters]\ncommits = { min = 0, max = 5000 }\n",
            "[parameters] commits",
            "more than 1,000 values",
        ),
        (
            HEAD + "[parameters]\nadmin = { min = 0, max = 1 }\n",
            "[parameters] admin",
            "a range needs an int parameter",
        ),
        (
            HEAD + '[parameters]\ntopics = [["a,b"]]\n',
            "[parameters] topics",
            "cannot be written as --set",
        ),
    ],
)
def test_a_bad_space_is_refused_naming_file_and_key_before_any_work(
    tmp_path, capsys, text, where, message
):
    path = _space(tmp_path, text)
    with pytest.raises(SpaceError if where else ValueError) as raised:
        read_space(path)
    assert str(raised.value).startswith(f"{path}: {where}")
    assert message in str(raised.value)
    assert main(["swarm", str(path)]) == 2
    printed = capsys.readouterr()
    assert printed.out == ""
    (line,) = printed.err.splitlines()
    assert line.startswith(f"groupspec swarm: {path}: {where}") and message in line


def test_an_unknown_space_name_lists_the_known_ones(capsys):
    assert main(["swarm", "no-such-space"]) == 2
    assert "no swarm space named 'no-such-space'; known: default" in capsys.readouterr().err


def test_bad_options_are_refused_before_any_work(tmp_path, capsys):
    for options, message in (
        (["--runs", "0"], "--runs must be at least 1"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--max-states", "0"], "--max-states must be at least 1"),
        (["--max-seconds", "0"], "--max-seconds must be positive"),
        (["--json", str(tmp_path / "missing" / "r.json")], "--json: directory"),
        (["--master", "local[2]"], "--master is an option of --engine spark"),
        (["--engine", "spark", "--workers", "2"], "--workers is an option of --engine local"),
    ):
        assert main(["swarm", *options]) == 2
        printed = capsys.readouterr()
        assert printed.out == "" and message in printed.err


def test_spark_without_java_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert main(["swarm", "--engine", "spark"]) == 2
    printed = capsys.readouterr()
    assert printed.out == "" and "openjdk-17-jre-headless" in printed.err


def test_shuffled_is_a_permutation_drawn_lazily():
    for size in (0, 1, 2, 17, 1000):
        assert sorted(shuffled(size, random.Random(size))) == list(range(size))
    first = next(shuffled(10**18, random.Random(1)))
    assert 0 <= first < 10**18


def test_the_drawing_is_a_function_of_the_seed_and_a_prefix_of_longer_runs():
    space = read_space("default")
    eight = draw(space, 8, 1)
    assert eight == draw(space, 8, 1)
    assert draw(space, 8, 2).configurations != eight.configurations
    assert draw(space, 4, 1).configurations == eight.configurations[:4]
    drawn = [(c.preset, c.overrides) for c in eight.configurations]
    assert len(set(drawn)) == 8
    assert [c.number for c in eight.configurations] == list(range(1, 9))


def test_impossible_combinations_are_skipped_and_a_small_space_is_exhausted(tmp_path):
    text = HEAD + "[parameters]\nclients = [1, 2]\nstatic_clients = [0, 2]\n"
    space = read_space(_space(tmp_path, text))
    assert space.size == 4
    drawn = draw(space, 10, 7)
    assert (len(drawn.configurations), drawn.impossible, drawn.exhausted) == (3, 1, True)
    settings = {
        (dict(c.overrides).get("clients", "2"), dict(c.overrides).get("static_clients", "0"))
        for c in drawn.configurations
    }
    assert settings == {("1", "0"), ("2", "0"), ("2", "2")}


def test_each_printed_command_checks_the_configuration_drawn():
    space = read_space("default")
    parser = build_parser()
    for configuration in draw(space, 8, 5).configurations:
        argv = shlex.split(configuration.command())
        assert argv[:2] == ["groupspec", "check"]
        args = parser.parse_args(argv[1:])
        assert (args.preset, args.max_states, args.no_liveness) == (
            configuration.preset,
            space.budget.max_states,
            True,
        )
        overrides = parse_set_options(args.overrides)
        assert overrides == dict(configuration.overrides)
        # Every parameter the space varies has one of the space's values in what check loads.
        parameters = load_model(args.preset, overrides).parameters
        for dimension in space.dimensions:
            assert parameters[dimension.key] in dimension.values


def test_list_prints_the_commands_and_checks_nothing(capsys):
    assert main(["swarm", "--runs", "3", "--seed", "4", "--list"]) == 0
    printed = capsys.readouterr().out.splitlines()
    commands = [c.command() for c in draw(read_space("default"), 3, 4).configurations]
    assert printed[-3:] == [f"{n:>3}  {command}" for n, command in enumerate(commands, 1)]
    assert not any(line.startswith("verdict") for line in printed)
