"""Divergent traces for `groupspec bench oracle`: a conforming trace with a seeded share of its
responses edited the way a broker that departs from Kafka's protocol answers (another error
code, generation, leader, protocol, member list, assignment, committed offset, or bytes that do
not decode), so that the oracle finds divergences of many kinds. Every event stays where it
was: the divergent trace is as long as the conforming one, so the two can be timed side by side.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

# Error codes a broker's answer is edited to (Kafka's numbers): NONE, ILLEGAL_GENERATION,
# UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, MEMBER_ID_REQUIRED, FENCED_INSTANCE_ID. The
# coordinator errors (NOT_COORDINATOR and the like) are left out: the oracle takes those as the
# group moving to another broker, which a single recording cannot show.
ERROR_CODES = (0, 22, 25, 27, 79, 82)
UNDECODABLE = "edited for the bench: the response's bytes do not decode"


def write_divergent_trace(source: Path, target: Path, seed: int, rate: float) -> Counter[str]:
    """Write `source` to `target` with each response edited with probability `rate` (seeded);
    the edits made, by name."""
    rng = random.Random(seed)
    made: Counter[str] = Counter()
    with source.open(encoding="utf-8") as lines, target.open("w", encoding="utf-8") as out:
        for number, line in enumerate(lines):
            document = json.loads(line)
            if number and document.get("dir") == "response" and rng.random() < rate:
                made[_edit(document, rng)] += 1
                line = json.dumps(document, separators=(",", ":")) + "\n"
            out.write(line)
    return made


def _edit(document: dict[str, Any], rng: random.Random) -> str:
    """Edit one response in place; the edit's name."""
    body = document.get("body")
    if not isinstance(body, dict):
        return "none"
    api = document.get("api")
    edits = ["undecodable"]
    if isinstance(body.get("error_code"), int):
        edits.append("error")
    if api == "JoinGroup" and body.get("error_code") == 0:
        edits += ["generation", "leader", "protocol"]
        if body.get("members"):
            edits.append("members")
    if api == "SyncGroup" and body.get("error_code") == 0:
        edits.append("assignment")
    if api == "OffsetCommit":
        edits.append("commit-error")
    if api == "OffsetFetch":
        edits.append("offset")
    edit = rng.choice(edits)
    if edit == "undecodable":
        del document["body"]
        document["undecodable"] = UNDECODABLE
    elif edit == "error":
        body["error_code"] = rng.choice([c for c in ERROR_CODES if c != body["error_code"]])
    elif edit == "generation":
        body["generation_id"] += 1
    elif edit == "leader":
        body["leader"] = "a-member-nobody-knows"
    elif edit == "protocol":
        body["protocol_name"] = (
            "roundrobin" if body.get("protocol_name") != "roundrobin" else "range"
        )
    elif edit == "members":
        body["members"] = body["members"][1:]
    elif edit == "assignment":
        body["assignment"] = ""
    elif edit == "commit-error":
        for partition in _partitions(body):
            partition["error_code"] = 22 if partition.get("error_code") == 0 else 0
    elif edit == "offset":
        for partition in _partitions(body):
            if isinstance(partition.get("committed_offset"), int):
                partition["committed_offset"] += 7
    return edit


def _partitions(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-partition parts of an OffsetCommit or OffsetFetch response (either layout)."""
    found: list[dict[str, Any]] = []
    for group in body.get("groups") or [body]:
        for topic in group.get("topics") or ():
            found.extend(p for p in topic.get("partitions") or () if isinstance(p, dict))
    return found
