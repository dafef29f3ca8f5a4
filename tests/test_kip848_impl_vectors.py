"""The KIP-848 presets' conformance vectors (tests/vectors/kip848-*.jsonl.gz, written by
`groupspec vectors --out tests/vectors --gzip kip848-2 ...`) replayed on the optimized
consumer-protocol coordinator and on the specification.

On the spec every vector must replay in full (it allows exactly the recorded outcomes: a stale
file fails here). On the impl no step may leave the allowed outcomes. Where the spec allows
several (range over every order of dynamic members, every balanced uniform assignment), the
runner hints the vector's target to the impl, which then replays every transition; without
hints the impl takes its own choices and the transitions behind the others are not replayed on
it (the figures below pin how many are, so a change of the impl's choices shows).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from groupspec.cli.main import main
from groupspec.conformance.kip848_vectors import (
    Kip848VectorError,
    read_kip848_vectors,
    run_kip848_vectors,
)
from groupspec.models.presets import KIP848_KIND, preset_names

COMMITTED = Path(__file__).resolve().parent / "vectors"
FILES = sorted(path.name for path in COMMITTED.glob("kip848-*.jsonl.gz"))
# Transitions the impl replays on its own choices (no hints), of all in the file.
UNHINTED_COVERAGE = {
    "kip848-2.jsonl.gz": (64, 122),
    "kip848-faults-1.jsonl.gz": (341, 341),
    "kip848-static-1.jsonl.gz": (146, 146),
    "kip848-uniform-2.jsonl.gz": (64, 354),
    "kip848-librdkafka-2.jsonl.gz": (50, 94),
}


# Presets whose worlds step what the vector format and impl/kip848 do not serve yet.
NO_VECTORS = {
    "kip848-failover-1": "coordinator failovers (unload, load): impl/kip848 keeps no log yet",
    "kip848-librdkafka-1": "coordinator failovers (unload, load), as kip848-failover-1",
    "kip848-commits-2": "OffsetCommit of consumer groups: the vector format carries only "
    "ConsumerGroupHeartbeat and ConsumerGroupDescribe (the differential runs compare offsets)",
    "kip848-admin-1": "DeleteGroups, ListGroups and offsets of an admin client: the vector format "
    "carries only ConsumerGroupHeartbeat and ConsumerGroupDescribe (the differential runs compare "
    "them)",
    "kip848-misbehaving-1": "OffsetCommit and OffsetFetch of the misbehaving client and the "
    "consumer, and an admin client's requests: the vector format carries only "
    "ConsumerGroupHeartbeat and ConsumerGroupDescribe",
    "kip848-fetches-2": "OffsetFetch of consumer groups: the vector format carries only "
    "ConsumerGroupHeartbeat and ConsumerGroupDescribe (the differential runs compare offsets)",
    "kip848-regex-1": "regex resolutions (RegexResolutionCompleted) and the refresh step's clock: "
    "the vector format carries only requests and timers, at one instant",
    "kip848-regex-2": "coordinator failovers (unload, load), as kip848-failover-1, and regex "
    "resolutions",
    "kip848-librdkafka-regex-1": "regex resolutions (RegexResolutionCompleted), as kip848-regex-1",
    "kip848-commits-1": "OffsetCommit of consumer groups, as kip848-commits-2",
    "kip848-kafka40-1": "OffsetCommit of consumer groups, as kip848-commits-2; and the world's "
    "clock (assignment_interval): the vector format steps the coordinator at time 0",
    "kip848-kafka39-1": "the world's clock (assignment_interval): the vector format steps the "
    "coordinator at time 0, with no profile but the default",
    "kip848-interval-1": "the world's clock (assignment_interval), as kip848-kafka39-1",
    "kip848-replay-1": "coordinator failovers (unload, load) of an uncleaned log, as "
    "kip848-failover-1",
    "kip848-kafka39-leave-1": "the world's clock (assignment_interval), as kip848-kafka39-1",
    "kip848-kafka39-misbehaving-1": "OffsetCommit of the misbehaving client, as "
    "kip848-misbehaving-1; and the Kafka 3.9 profile: the vector format steps the coordinator "
    "with no profile but the default",
    "kip848-kafka39-disabled-2": "ListGroups and OffsetFetch of an admin client, as "
    "kip848-admin-1, against a broker without the consumer protocol",
}


def test_every_kip848_preset_has_committed_vectors():
    exported = sorted(
        f"{name}.jsonl.gz" for name in preset_names(KIP848_KIND) if name not in NO_VECTORS
    )
    assert exported == FILES
    assert set(NO_VECTORS) <= set(preset_names(KIP848_KIND))


@pytest.mark.parametrize("name", FILES)
def test_the_specification_replays_every_kip848_vector(name):
    vectors = read_kip848_vectors(COMMITTED / name)
    with gzip.open(COMMITTED / name, "rt") as source:
        header = json.loads(source.readline())
    report = run_kip848_vectors(vectors, "spec")
    assert report.failures == [], "stale: run `groupspec vectors --out tests/vectors --gzip`"
    assert len(report.covered) == report.transitions == header["coordinator_transitions"]


@pytest.mark.parametrize("name", FILES)
def test_the_impl_replays_every_kip848_vector_within_the_allowed_outcomes(name):
    vectors = read_kip848_vectors(COMMITTED / name)
    report = run_kip848_vectors(vectors, "impl")
    assert report.failures == [], report.failures[:1]
    assert report.passed and report.diverged == 0
    assert len(report.covered) == report.transitions
    unhinted = run_kip848_vectors(vectors, "impl", hints=False)
    assert unhinted.failures == [], unhinted.failures[:1]
    assert (len(unhinted.covered), unhinted.transitions) == UNHINTED_COVERAGE[name]


def test_a_seeded_fault_in_the_impl_fails_the_vectors(monkeypatch):
    """An impl whose fencing forgets to bump the group epoch is caught, naming the node."""
    from groupspec.impl.kip848 import fencing, heartbeat, timers

    original = fencing.fence_member

    def forgetful(rt, group, member_id):  # type: ignore[no-untyped-def]
        original(rt, group, member_id)
        group.group_epoch -= 1

    monkeypatch.setattr(heartbeat, "fence_member", forgetful)
    monkeypatch.setattr(timers, "fence_member", forgetful)
    report = run_kip848_vectors(read_kip848_vectors(COMMITTED / "kip848-faults-1.jsonl.gz"), "impl")
    assert not report.passed and report.failures[0].node > 0


def test_export_and_run_from_the_command_line(tmp_path, capsys):
    assert main(["vectors", "--out", str(tmp_path), "--gzip", "--quiet", "kip848-2"]) == 0
    written = tmp_path / "kip848-2.jsonl.gz"
    assert gzip.decompress(written.read_bytes()) == gzip.decompress(
        (COMMITTED / "kip848-2.jsonl.gz").read_bytes()
    ), "tests/vectors/kip848-2.jsonl.gz is stale"
    capsys.readouterr()
    document = tmp_path / "report.json"
    args = ["vectors", "--run", str(written), "--adapter", "impl", "--quiet", "--json"]
    assert main([*args, str(document)]) == 0
    (report,) = json.loads(document.read_text())
    assert report["passed"] and report["covered_transitions"] == report["transitions"] == 122
    assert "pass: 92 vectors" in capsys.readouterr().out


def test_a_broken_kip848_vector_file_is_refused_naming_the_line(tmp_path):
    broken = tmp_path / "kip848-x.jsonl"
    lines = gzip.decompress((COMMITTED / "kip848-2.jsonl.gz").read_bytes()).decode().splitlines()
    lines[3] = lines[3].replace('"parent": ', '"parent": 9999, "was": ', 1)
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(Kip848VectorError, match=r"kip848-x.jsonl:4"):
        read_kip848_vectors(broken)
    assert main(["vectors", "--run", str(broken), "--quiet"]) == 2
