"""Vector files whose steps move the clock (a retention check after an idle period) or change the
coordinator's configuration (a failover to a coordinator configured otherwise)."""

import gzip
import json
from pathlib import Path

import pytest

from groupspec.conformance.impl_adapter import ImplAdapter
from groupspec.conformance.vectors import (
    SpecAdapter,
    VectorFileError,
    read_vectors,
    run_vectors,
)

COMMITTED = Path(__file__).parent / "vectors"


def _nodes(name: str) -> list[dict]:
    text = gzip.decompress((COMMITTED / name).read_bytes()).decode()
    return [json.loads(line) for line in text.splitlines()[1:]]


def test_the_retention_check_moves_the_clock_and_every_later_step_keeps_it():
    nodes = _nodes("retention-1.jsonl.gz")
    checks = [n for n in nodes if n["input"]["type"] == "OffsetRetentionCheck"]
    assert checks and all(n["now_ms"] > 0 for n in checks)
    by_number = {n["node"]: n for n in nodes}
    for node in nodes:
        parent = by_number.get(node["parent"])
        if parent is not None and parent.get("now_ms"):
            assert node.get("now_ms") == parent["now_ms"]  # the clock never goes back
    expiring = [
        n for n in checks if "retention.offsets_expired" in n["outcomes"][n["taken"]]["rules"]
    ]
    assert expiring


def test_after_the_failover_the_new_coordinators_config_rides_on_each_step():
    vectors = read_vectors(COMMITTED / "failover.jsonl.gz")
    reconfigured = [step for step in vectors.steps[1:] if step is not None and step.config]
    assert reconfigured
    assert {step.config.group_max_size for step in reconfigured} == {1}
    assert vectors.config.group_max_size > 1


class _NoClock:
    """The specification behind an adapter that cannot move its clock or take a new config."""

    def __init__(self) -> None:
        self._inner = SpecAdapter()

    def reset(self, config):
        self._inner.reset(config)

    def apply(self, event, hints):
        return self._inner.apply(event, hints)

    def member_ids(self, group_id):
        return self._inner.member_ids(group_id)


@pytest.mark.parametrize(
    ("name", "missing"),
    [("retention-1.jsonl.gz", "set_time"), ("failover.jsonl.gz", "reconfigure")],
)
def test_an_adapter_without_the_method_a_file_needs_fails_and_says_which(name, missing):
    report = run_vectors(read_vectors(COMMITTED / name), _NoClock(), max_failures=1)
    assert not report.passed
    assert f"the adapter has no {missing}" in report.failures[0].detail


@pytest.mark.parametrize("adapter", [SpecAdapter, ImplAdapter])
def test_the_spec_and_the_impl_pass_the_retention_vectors(adapter):
    report = run_vectors(read_vectors(COMMITTED / "retention-1.jsonl.gz"), adapter())
    assert report.passed, report.failures[:1]
    assert report.state_not_checked is None


def test_a_node_with_a_bad_time_or_config_is_refused_with_its_line(tmp_path):
    source = gzip.decompress((COMMITTED / "retention-1.jsonl.gz").read_bytes()).decode()
    header, first, *rest = source.splitlines()
    for field, value, problem in (
        ("now_ms", -5, "now_ms must be a time in ms"),
        ("now_ms", 1.5, "now_ms must be a time in ms"),
        ("config", {"type": "HeartbeatResponse", "error_code": "NONE"}, "not a coordinator config"),
    ):
        node = {**json.loads(first), field: value}
        path = tmp_path / "bad.jsonl"
        path.write_text("\n".join([header, json.dumps(node), *rest]) + "\n")
        with pytest.raises(VectorFileError, match=f"bad.jsonl:2: .*{problem}"):
            read_vectors(path)
