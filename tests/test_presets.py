"""Preset files: every shipped preset loads; bad presets and bad overrides name file and key."""

from pathlib import Path

import pytest

from groupspec.models.presets import (
    PresetError,
    load_preset,
    parse_set_options,
    preset_names,
    read_preset,
)
from groupspec.models.world_params import PARAMETER_TYPES, ParameterError, WorldParameters

SHIPPED = ("cooperative-3", "eager-2", "eager-3", "failover", "mixed", "scale-down", "static-2")


def test_the_issue_presets_are_shipped():
    assert set(SHIPPED) <= set(preset_names())


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_names_every_parameter_and_describes_itself(name):
    preset = read_preset(name)
    assert preset.description
    text = preset.path.read_text(encoding="utf-8")
    # Presets are documentation too: every parameter is written out, none left to defaults.
    for key in PARAMETER_TYPES:
        assert f"\n{key} = " in text, f"{name} does not set {key}"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("[parameters]\nclients = 0\n", "[parameters] clients", "between 1 and"),
        ("[parameters]\nmax_generation = 0\n", "[parameters] max_generation", "at least 1"),
        ("[parameters]\nclientz = 2\n", "[parameters] clientz", "unknown parameter"),
        ('[parameters]\nclients = "two"\n', "[parameters] clients", "expected int"),
        ("[parameters]\nsymmetry = 1\n", "[parameters] symmetry", "expected bool"),
        ('[parameters]\ntopics = "t"\n', "[parameters] topics", "expected list of str"),
        ("[parameters]\npartitions = [2, 3]\n", "[parameters] partitions", "one count per topic"),
        ('[parameters]\nassignors = ["rnage"]\n', "[parameters] assignors", "unknown assignor"),
        ("[parameters]\nstatic_clients = 3\n", "[parameters] static_clients", "at most clients"),
        ("[parameters]\ncrashes = -1\n", "[parameters] crashes", "at least 0"),
        ('[parameters]\nsubscription = ["u"]\n', "[parameters] subscription", "not in topics"),
        ("[parameters]\nsubscription_changes = 1\n", "[parameters] subscription_changes", "needs"),
        ("[model]\nname = 'x'\n", "[model] name", "unknown key"),
        ("[extras]\nx = 1\n", "extras", "unknown table"),
    ],
)
def test_a_bad_preset_names_file_and_key(tmp_path, text, key, words):
    path = write(tmp_path, text)
    with pytest.raises(PresetError) as raised:
        load_preset(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert words in message
    assert raised.value.key == key


def test_malformed_toml_names_file_and_line(tmp_path):
    path = write(tmp_path, "[parameters]\nclients = 2\nmax_generation = = 3\n")
    with pytest.raises(PresetError) as raised:
        load_preset(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: malformed TOML")
    assert "line 3" in message


def test_an_unknown_preset_lists_the_known_ones():
    with pytest.raises(PresetError, match=r"no preset named 'nope'; known: .*eager-2"):
        load_preset("nope")


def test_set_overrides_parse_by_declared_type():
    preset = read_preset(
        "eager-2",
        {
            "max_generation": "3",
            "symmetry": "false",
            "assignors": "roundrobin,range",
            "partitions": "3",
        },
    )
    parameters = preset.parameters
    assert parameters.max_generation == 3
    assert parameters.symmetry is False
    assert parameters.assignors == ("roundrobin", "range")
    assert parameters.partitions == (3,)
    # Overrides change nothing else.
    plain = read_preset("eager-2").parameters
    assert parameters.clients == plain.clients and parameters.evictions == plain.evictions


@pytest.mark.parametrize(
    ("overrides", "key", "words"),
    [
        ({"max_generation": "three"}, "--set max_generation", "expected int"),
        ({"symmetry": "maybe"}, "--set symmetry", "expected bool"),
        ({"colour": "red"}, "--set colour", "unknown parameter"),
        ({"clients": "9"}, "--set clients", "between 1 and"),
        ({"partitions": "2,x"}, "--set partitions", "comma-separated ints"),
    ],
)
def test_a_bad_override_names_file_and_key(overrides, key, words):
    with pytest.raises(PresetError) as raised:
        load_preset("eager-2", overrides)
    message = str(raised.value)
    assert message.startswith(str(read_preset("eager-2").path) + f": {key}: "), message
    assert words in message


def test_set_options_split_on_the_first_equals_sign():
    assert parse_set_options(["a=1", "b = x=y"]) == {"a": "1", "b": " x=y"}
    with pytest.raises(ParameterError, match="expected name=value"):
        parse_set_options(["novalue"])


def test_defaults_are_a_valid_world():
    from groupspec.models.world_params import validate

    validate(WorldParameters())
