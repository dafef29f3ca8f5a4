"""How a divergence names the field it differs in (what divergences are grouped by)."""

from __future__ import annotations

from groupspec.oracle.trace.divergence_text import first_difference


def test_the_field_named_is_one_the_observed_version_has():
    # OffsetFetch v3 has no committed_leader_epoch; the specification's body always does. The
    # oracle compares it from v5 on only, so the divergence is in the metadata.
    allowed = {
        "partitions": [{"committed_offset": -1, "committed_leader_epoch": -1, "metadata": ""}]
    }
    observed = {"partitions": [{"committed_offset": -1, "metadata": None}]}
    assert first_difference(allowed, observed) == "partitions[].metadata"
    # A JoinGroup before v7 carries no protocol_type: the leader is what differs.
    allowed = {"error_code": 0, "protocol_type": "consumer", "leader": "a"}
    assert first_difference(allowed, {"error_code": 0, "leader": "b"}) == "leader"
    assert first_difference(allowed, {"error_code": 0, "leader": "a"}) is None
    # A field the observed version has but with another value is still named.
    assert first_difference(allowed, {"error_code": 0, "protocol_type": None, "leader": "a"}) == (
        "protocol_type"
    )
