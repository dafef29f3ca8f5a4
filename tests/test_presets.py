"""Preset files: every shipped preset loads; bad presets and bad overrides name file and key."""

from pathlib import Path

import pytest

from groupspec.checker.bfs import search
from groupspec.models.parameters import ParameterError, parse_set_options
from groupspec.models.preset_models import load_model
from groupspec.models.presets import (
    KINDS,
    PresetError,
    load_preset,
    preset_names,
    read_preset,
)
from groupspec.models.world_params import WorldParameters, validate

SHIPPED = (
    "admin-1",
    "cooperative-2",
    "cooperative-3",
    "eager-2",
    "eager-3",
    "failover",
    "foreign-1",
    "limits-2",
    "mixed",
    "retention-1",
    "scale-down",
    "static-2",
    "writes-2",
)


def test_the_issue_presets_are_shipped():
    assert set(SHIPPED) <= set(preset_names())


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_states_only_what_it_changes_and_what_it_expects(name):
    preset = read_preset(name)
    assert preset.description
    declared = KINDS[preset.kind].parameters
    for key, value in preset.stated.items():
        assert value != declared[key].default, f"{name} restates the default of {key}"
    if KINDS[preset.kind].exhaustive:
        assert preset.expected is not None, f"{name} has no [expected] table"
    else:
        assert preset.expected is None, f"{name} is unbounded: nothing to expect of a check"


def test_two_phase_gives_what_its_preset_expects():
    loaded = load_model("two-phase")
    result = search(loaded.model)
    expected = loaded.expected
    assert expected is not None
    assert (result.verdict, result.distinct_states, result.transitions, result.depth) == (
        expected.verdict,
        expected.distinct_states,
        expected.transitions,
        expected.depth,
    )


def test_overrides_drop_the_expected_results():
    assert load_model("two-phase", {"resource_managers": "4"}).expected is None


HEADER = '[model]\ndescription = "a world"\n'


def write(tmp_path: Path, text: str, header: str = HEADER) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(header + text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("[parameters]\nclients = 0\n", "[parameters] clients", "between 1 and"),
        (
            "[parameters]\nmax_generation = 0\n",
            "[parameters] max_generation",
            "between 1 and 10, got 0",
        ),
        ("[parameters]\nclientz = 2\n", "[parameters] clientz", "unknown parameter"),
        ('[parameters]\nclients = "two"\n', "[parameters] clients", "expected int"),
        ("[parameters]\nsymmetry = 1\n", "[parameters] symmetry", "expected bool"),
        ('[parameters]\ntopics = "t"\n', "[parameters] topics", "expected list of str"),
        ("[parameters]\npartitions = [2, 3]\n", "[parameters] partitions", "one count per topic"),
        (
            '[parameters]\nassignors = ["rnage"]\n',
            "[parameters] assignors",
            "every item must be one of",
        ),
        ("[parameters]\nstatic_clients = 3\n", "[parameters] static_clients", "at most clients"),
        ("[parameters]\ncrashes = -1\n", "[parameters] crashes", "between 0 and 10, got -1"),
        ('[parameters]\nsubscription = ["u"]\n', "[parameters] subscription", "not in topics"),
        ("[parameters]\nsubscription_changes = 1\n", "[parameters] subscription_changes", "needs"),
        ("[extras]\nx = 1\n", "extras", "unknown table"),
        ("[expected]\nverdict = 'maybe'\n", "[expected] verdict", "pass or fail"),
        ("[expected]\nverdict = 'pass'\nstates = 3\n", "[expected] states", "unknown key"),
        ("[expected]\nverdict = 'pass'\ndepth = -1\n", "[expected] depth", "a count"),
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


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("", "[model]", "missing"),
        ("[parameters]\nclients = 2\n", "[model]", "missing"),
        ("[model]\nname = 'x'\n", "[model] name", "unknown key"),
        ("[model]\n", "[model] description", "expected a sentence"),
        ("[model]\nkind = 'petri'\ndescription = 'x'\n", "[model] kind", "unknown kind"),
    ],
)
def test_a_preset_must_say_what_it_is(tmp_path, text, key, words):
    path = write(tmp_path, text, header="")
    with pytest.raises(PresetError) as raised:
        load_preset(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert words in message


def test_a_binary_preset_is_named_not_decoded(tmp_path):
    path = tmp_path / "junk.toml"
    path.write_bytes(b"[model]\n\xff\xfe\x00junk")
    with pytest.raises(PresetError, match=r"line 2: not UTF-8"):
        load_preset(path)


def test_malformed_toml_names_file_and_line(tmp_path):
    path = write(tmp_path, "[parameters]\nclients = 2\nmax_generation = = 3\n")
    with pytest.raises(PresetError) as raised:
        load_preset(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: malformed TOML")
    assert "line 5" in message


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
        (
            {"static_clients": "1", "legacy_clients": "2"},
            "--set legacy_clients",
            "at most clients - static_clients (1)",
        ),
        ({"upgrade_assignors": "range+nope"}, "--set upgrade_assignors", "unknown assignor 'nope'"),
        ({"upgrade_assignors": "range+range"}, "--set upgrade_assignors", "distinct assignors"),
        ({"retention_checks": "-1"}, "--set retention_checks", "between 0 and 10"),
        ({"failover_group_max_size": "-2"}, "--set failover_group_max_size", "between 0 and"),
        ({"max_in_flight": "11"}, "--set max_in_flight", "between 1 and 10, got 11"),
        ({"partitions": "2,9"}, "--set partitions", "every item must be between 1 and 8"),
        ({"topics": "a,b,c,d,e"}, "--set topics", "needs 1 to 4 items, got 5"),
        ({"assignors": "range,nope"}, "--set assignors", "every item must be one of"),
        ({"kafka_version": "2.x"}, "--set kafka_version", "must be one of"),
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


def test_every_parameter_of_every_kind_declares_its_range():
    # Issue 29: a parameter without a range let a typo (resource_managers=100000) start a
    # check that cannot end. Bools are ranged by their type.
    for kind in KINDS.values():
        for parameter in kind.parameters.values():
            if parameter.kind == "bool":
                continue
            declared = parameter.range
            bounded = (
                declared.maximum is not None or declared.choices is not None or declared.note
                if parameter.kind in ("int", "str")
                else declared.length is not None
            )
            assert bounded, f"{kind.name}: {parameter.name} declares no range"
            assert parameter.range_text, parameter.name


def test_a_default_outside_its_own_range_is_refused_where_it_is_declared():
    from groupspec.models.parameters import documented

    with pytest.raises(ValueError, match="out of its own range: must be between 1 and 3, got 5"):
        documented(5, "a count", minimum=1, maximum=3)
    with pytest.raises(ValueError, match="needs 1 to 2 items, got 0"):
        documented((), "names", length=(1, 2))


def test_parameters_built_in_python_are_range_checked_too():
    from groupspec.models.two_phase import TwoPhaseModel

    with pytest.raises(ParameterError, match="between 1 and 1,000, got 100000"):
        TwoPhaseModel(resource_managers=100_000)
    with pytest.raises(ParameterError, match="must be between 0 and 10, got 11") as raised:
        validate(WorldParameters(max_offset=11))
    assert raised.value.key == "max_offset"
