"""Conformance vectors: the walk matches the checker, the file round-trips, and the runner judges."""

import gzip
import json
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from groupspec.checker.bfs import search
from groupspec.cli.main import main
from groupspec.conformance.coordinator_runs import CoordinatorRunsError, explore_coordinator_runs
from groupspec.conformance.vector_codec import VectorDecodeError, decode, encode
from groupspec.conformance.vector_state import rename_projection, rename_timer
from groupspec.conformance.vectors import (
    SpecAdapter,
    VectorFileError,
    read_vectors,
    run_vectors,
    upgrade_vectors,
    write_vectors,
)
from groupspec.models.preset_models import group_preset_names, load_model
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import JoinGroupProtocol, JoinGroupRequest, Received, RequestRef
from groupspec.vocabulary.responses import HeartbeatResponse, JoinGroupResponse, Response

PRESET = "static-2"


@pytest.fixture(scope="module")
def runs():
    return explore_coordinator_runs(load_model(PRESET, {}))


@pytest.fixture(scope="module")
def vector_file(runs, tmp_path_factory):
    path = tmp_path_factory.mktemp("vectors") / f"{PRESET}.jsonl"
    write_vectors(runs, path)
    return path


def test_the_walk_visits_exactly_the_checkers_states(runs):
    checked = search(load_model(PRESET, {}).model)
    assert runs.world_states == checked.distinct_states
    assert runs.coordinator_transitions > 100
    # Every distinct transition is the first sighting of exactly one kept node.
    assert sum(node.first for node in runs.nodes) == runs.coordinator_transitions


def test_runs_are_real_coordinator_runs(runs):
    """Replaying a path on the specification from its initial state reproduces every step: the
    member counter never goes backwards (no renumbering) and each step's outcome is allowed."""
    for leaf in runs.leaves[:50]:
        adapter = SpecAdapter()
        for step in runs.path(leaf):
            responses = adapter.apply(step.input, step.outcome.choices)
            assert tuple(responses) == step.outcome.responses


def test_the_specification_passes_its_own_vectors_with_full_coverage(vector_file):
    report = run_vectors(read_vectors(vector_file), SpecAdapter())
    assert report.failures == []
    assert report.passed
    assert report.covered_transitions == report.transitions > 0


class RenamingAdapter(SpecAdapter):
    """The specification, but its member ids are spelled differently (as any broker may)."""

    INVERSE = MappingProxyType(
        {f"broker-{n}-x": f"consumer-{n}" for n in range(100)}
        | {f"i{k}-broker-{n}-x": f"i{k}-{n}" for k in range(1, 4) for n in range(100)}
    )
    FORWARD = MappingProxyType({v: k for k, v in INVERSE.items()})

    def apply(self, event, hints):
        event = decode(_rename(encode(event), self.INVERSE))
        return [decode(_rename(encode(r), self.FORWARD)) for r in super().apply(event, hints)]

    def member_ids(self, group_id):
        return [self.FORWARD[i] for i in super().member_ids(group_id)]

    def armed_timers(self):
        return [rename_timer(event, self.FORWARD) for event in super().armed_timers()]

    def group_projection(self, group_id):
        projection = super().group_projection(group_id)
        return None if projection is None else rename_projection(projection, self.FORWARD)


def _rename(document, mapping):
    if isinstance(document, dict):
        return {k: _rename(v, mapping) for k, v in document.items()}
    if isinstance(document, list):
        return [_rename(v, mapping) for v in document]
    return mapping.get(document, document) if isinstance(document, str) else document


def test_member_ids_are_bound_not_compared(vector_file):
    report = run_vectors(read_vectors(vector_file), RenamingAdapter())
    assert report.failures == []
    assert report.passed
    assert report.state_not_checked is None


def _as_version_1(source, target):
    """The gzip-compressed version-2 file `source` rewritten at `target` as format version 1
    (no timers or groups on any node); returns the version-2 text."""
    text = gzip.decompress(source.read_bytes()).decode()
    header, *nodes = (json.loads(line) for line in text.splitlines())
    lines = [{**header, "version": 1}]
    lines += [{k: v for k, v in node.items() if k not in ("timers", "groups")} for node in nodes]
    target.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    return text


SMALL = "foreign-1.jsonl.gz"  # the smallest committed file (419 steps)


def test_a_version_1_file_runs_responses_only_and_says_so(tmp_path, capsys):
    old = tmp_path / "old.jsonl"
    _as_version_1(COMMITTED / SMALL, old)
    report = run_vectors(read_vectors(old), SpecAdapter())
    assert report.passed
    assert report.state_not_checked == "a version-1 file records no timers or group states"
    document_path = tmp_path / "report.json"
    assert main(["vectors", "--run", str(old), "--quiet", "--json", str(document_path)]) == 0
    (document,) = json.loads(document_path.read_text())
    assert document["timers_and_groups_checked"] is False
    assert document["timers_and_groups_not_checked_because"] == report.state_not_checked
    assert "timers and group states not checked: a version-1 file" in capsys.readouterr().out


def test_upgrading_a_version_1_file_reproduces_the_version_2_file(tmp_path, capsys):
    old = tmp_path / "old.jsonl"
    committed = _as_version_1(COMMITTED / SMALL, old)
    assert main(["vectors", "--upgrade", str(old)]) == 0
    assert "upgraded to version 2" in capsys.readouterr().out
    assert old.read_text() == committed


def test_an_upgrade_the_specification_does_not_reproduce_is_refused(tmp_path):
    old = tmp_path / "old.jsonl"
    _as_version_1(COMMITTED / SMALL, old)
    lines = old.read_text().splitlines()
    number, node = next(
        (n, node)
        for n, node in enumerate(map(json.loads, lines[1:]), 1)
        if "error_code" in str(node["outcomes"][node["taken"]]["responses"][:1])
    )
    node["outcomes"][node["taken"]]["responses"][0]["body"]["error_code"] = "NOT_COORDINATOR"
    lines[number] = json.dumps(node, sort_keys=True)
    old.write_text("\n".join(lines) + "\n")
    before = old.read_text()
    with pytest.raises(
        VectorFileError, match=rf"old\.jsonl:{number + 1}: the specification no longer allows"
    ):
        upgrade_vectors(old)
    assert main(["vectors", "--upgrade", str(old)]) == 2
    assert old.read_text() == before
    assert not list(tmp_path.glob("*.tmp"))


class NoFencingAdapter(SpecAdapter):
    """A coordinator that answers every heartbeat with NONE: it never tells a member to rejoin."""

    def apply(self, event, hints):
        return [
            replace(r, body=HeartbeatResponse(ErrorCode.NONE))
            if isinstance(r.body, HeartbeatResponse)
            else r
            for r in super().apply(event, hints)
        ]


def test_a_deviating_implementation_fails_with_the_step_and_the_allowed_outcomes(vector_file):
    report = run_vectors(read_vectors(vector_file), NoFencingAdapter(), max_failures=3)
    assert not report.passed
    failure = report.failures[0]
    assert "match none of the" in failure.detail
    assert failure.inputs[-1]["request"]["type"] == "HeartbeatRequest"
    assert any(
        body["body"]["error_code"] != "NONE" for outcome in failure.expected for body in outcome
    )


def test_codec_round_trips_requests_and_responses():
    request = Received(
        RequestRef("c1/0", 3),
        JoinGroupRequest(
            "g", "", "consumer", (JoinGroupProtocol("range", b"\x00\x01"),), 10_000, 30_000, "i1"
        ),
    )
    assert decode(json.loads(json.dumps(encode(request)))) == request
    response = Response(RequestRef("c1/0", 3), JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED))
    assert decode(encode(response)) == response


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ({"type": "Nope"}, "unknown type 'Nope'"),
        ({"type": "HeartbeatResponse", "error_code": "WAT"}, "$.error_code: unknown error code"),
        ({"type": "RequestRef", "connection": "c", "correlation_id": "1"}, "expected an integer"),
        ({"type": "RequestRef", "connection": "c", "correlation_id": 1, "x": 2}, "unknown fields"),
        ([], "expected an object"),
    ],
)
def test_codec_errors_name_the_place(document, words):
    with pytest.raises(VectorDecodeError, match=words.replace("$", r"\$")):
        decode(document)


def test_a_corrupt_vector_line_names_file_and_line(vector_file, tmp_path):
    lines = vector_file.read_text().splitlines()
    lines[5] = lines[5][:40]
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(VectorFileError, match=r"broken\.jsonl:6: not JSON"):
        read_vectors(broken)
    assert main(["vectors", "--run", str(broken), "--quiet"]) == 2


def test_vectors_need_a_fault_free_group_preset():
    with pytest.raises(CoordinatorRunsError, match="fault"):
        explore_coordinator_runs(load_model("eager-2", {"fault": "KAFKA-2555"}))


def test_cli_exports_and_runs(tmp_path, capsys):
    # A preset file of one's own, smaller than the shipped ones (no crash: 838 states).
    shipped = (Path(load_model(PRESET, {}).path)).read_text()
    preset = tmp_path / "tiny.toml"
    preset.write_text(shipped.replace("\ncrashes = 1\n", "\ncrashes = 0\n"))
    out = tmp_path / "vectors"
    assert main(["vectors", "--out", str(out), "--quiet", "--gzip", str(preset)]) == 0
    assert (out / "tiny.jsonl.gz").is_file()
    report = tmp_path / "report.json"
    assert main(["vectors", "--run", str(out), "--quiet", "--json", str(report)]) == 0
    (document,) = json.loads(report.read_text())
    assert document["passed"] and document["covered_transitions"] == document["transitions"]
    assert document["timers_and_groups_checked"] is True
    assert document["timers_and_groups_not_checked_because"] is None
    assert "pass" in capsys.readouterr().out
    assert main(["vectors", "--run", str(out), "--adapter", "no.such.module:X"]) == 2


COMMITTED = Path(__file__).resolve().parent / "vectors"


def test_committed_vectors_are_fresh(vector_file):
    """tests/vectors/ is regenerated by `groupspec vectors --gzip --out tests/vectors`; the
    smallest preset is compared in full here, and the specification must still pass them all."""
    committed = gzip.decompress((COMMITTED / f"{PRESET}.jsonl.gz").read_bytes()).decode()
    assert committed == vector_file.read_text(), (
        "tests/vectors is stale: run `groupspec vectors --gzip --out tests/vectors`"
    )


# The kip848-* files are KIP-848 vectors, another format (tests/test_kip848_impl_vectors.py).
CLASSIC_FILES = sorted(
    path.name for path in COMMITTED.glob("*.jsonl.gz") if not path.name.startswith("kip848-")
)


@pytest.mark.parametrize("name", CLASSIC_FILES)
def test_the_specification_passes_every_committed_vector(name):
    report = run_vectors(read_vectors(COMMITTED / name), SpecAdapter())
    assert report.failures == []
    assert report.passed, (report.covered_transitions, report.transitions, report.diverged)


def test_every_reference_preset_has_committed_vectors():
    assert set(CLASSIC_FILES) == {f"{preset}.jsonl.gz" for preset in group_preset_names()}


@pytest.mark.parametrize("preset", group_preset_names())
def test_every_committed_file_walked_the_preset_as_it_is_now(preset):
    """A file made before its preset's world changed covers the old world: its header's count of
    world states must be the preset's (regenerate with `groupspec vectors --out`)."""
    with gzip.open(COMMITTED / f"{preset}.jsonl.gz", "rt") as source:
        header = json.loads(source.readline())
    assert header["world_states"] == load_model(preset).expected.distinct_states


def test_a_preset_name_with_dots_names_its_vector_file_whole():
    from groupspec.cli.vectors_command import _file_stem

    assert _file_stem("kip848-kafka-3.9-1") == "kip848-kafka-3.9-1"
    assert _file_stem("eager-2") == "eager-2"
    assert _file_stem("/tmp/presets/tiny.toml") == "tiny"
