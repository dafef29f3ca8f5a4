"""groupspec.vocabulary — the Kafka message vocabulary: requests, responses, error codes and
group states, written once and shared by the specification, the implementation, the wire
server, the oracle and the conformance tools.

Standard library only, and no behaviour: shapes, the checks a wire frame implies, and Kafka's
fixed tables (error codes, which group states follow which).
"""
