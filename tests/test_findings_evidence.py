"""The traces kept as evidence of the findings (docs/findings/, recorded by `groupspec
reproduce` from Apache Kafka 4.4.0 and 3.9.2, docs/bugs.md): each passes the oracle under its
broker's profile and shows the answers the finding rests on. A new recording replaces them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupspec.oracle.trace.validate import DIVERGED, PASS, validate_trace

EVIDENCE = Path(__file__).resolve().parent.parent / "docs" / "findings"
RELEASES = {"4.4.0": "4.x", "3.9.2": "3.x"}
FENCED_INSTANCE_ID, NOT_COORDINATOR = 82, 16


def responses(trace: Path, api: str) -> list[dict]:
    """The bodies of the trace's responses of `api`, in order."""
    events = [json.loads(line) for line in trace.read_text().splitlines()[1:]]
    return [e["body"] for e in events if e["dir"] == "response" and e.get("api") == api]


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_the_failover_trace_passes_and_shows_the_live_member_fenced(release: str) -> None:
    trace = EVIDENCE / f"static-failover-fenced-{release}.jsonl"
    verdict = validate_trace(trace)
    assert (verdict.status, verdict.kafka_version) == (PASS, RELEASES[release])
    syncs = [body["error_code"] for body in responses(trace, "SyncGroup")]
    # generation 1 stored; c1's SyncGroup of generation 2 refused by the old coordinator, then
    # fenced by the new one; c2's likewise moved, then unknown; c2 alone at the end.
    assert syncs == [0, NOT_COORDINATOR, FENCED_INSTANCE_ID, NOT_COORDINATOR, 25, 0]
    assert "Apache Kafka " + release in json.loads(trace.read_text().splitlines()[0])["source"]


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_the_static_leader_trace_passes_and_shows_the_assignment_skipped(release: str) -> None:
    trace = EVIDENCE / f"static-leader-new-topic-unassigned-{release}.jsonl"
    verdict = validate_trace(trace)
    assert (verdict.status, verdict.kafka_version) == (PASS, RELEASES[release])
    joins = responses(trace, "JoinGroup")
    assert [(j["generation_id"], j["skip_assignment"]) for j in joins] == [(1, False), (1, True)]
    (described,) = responses(trace, "DescribeGroups")[0]["groups"]
    assert described["group_state"] == "Stable"


# The specification's 4.x profile describes the members of a group that is not Stable without
# their assignment, as the Scala coordinator does; Kafka 4.4.0's Java coordinator keeps it
# (ClassicGroupMember.describeNoMetadata sets the member assignment, in kafka-group-coordinator
# 3.9.2's sources and in 4.4.0's class file), so this DescribeGroups of a PreparingRebalance
# group, recorded from Kafka 4.4.0, diverges. docs/bugs.md, "Reproduced on Apache Kafka".
@pytest.mark.xfail(strict=True, reason="4.x describes a rebalancing member with its assignment")
def test_kafka_4x_describes_a_rebalancing_groups_members_with_their_assignment() -> None:
    trace = EVIDENCE / "describe-rebalancing-group-4.4.0.jsonl"
    described = responses(trace, "DescribeGroups")[-1]["groups"][0]
    assert described["group_state"] == "PreparingRebalance"
    assert any(member["member_assignment"] for member in described["members"])
    verdict = validate_trace(trace)
    assert verdict.status != DIVERGED, verdict.groups[0].first.reason
