"""Small swarm spaces the swarm tests share (each configuration checks in about a second)."""

# eager-2 with and without KAFKA-2555 (commits not fenced by generation), one generation.
FAULT_SPACE = """
[swarm]
description = "eager-2 with and without an unfenced OffsetCommit"
preset = "eager-2"

[budget]
max_states = 3000

[parameters]
max_generation = [1]
fault = ["", "KAFKA-2555"]
"""

# Four tiny configurations: two pass, one fails (KAFKA-8500), one is stopped by the budget;
# the client's own session timeout is a rule no reference preset reaches.
TINY_SPACE = """
[swarm]
description = "tiny worlds of both kinds of members"
preset = ["eager-2", "static-2"]

[budget]
max_states = 4000

[parameters]
max_generation = [1]
evictions = [0]
commits = [0]
session_timeouts = [1]
fault = ["", "KAFKA-8500"]
"""
