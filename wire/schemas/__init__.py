"""KIP-848's message schemas for kafka-python's schema-driven codec (`ApiMessage`).

kafka-python 3.0.12 ships no schema for ConsumerGroupHeartbeat (key 68) or ConsumerGroupDescribe
(key 69). The JSON files here describe their fields for its loader: names, types, the versions
each field exists in, nullability and defaults, as Kafka's message schemas
(`clients/src/main/resources/common/message/ConsumerGroup*.json`, Kafka 4.4.0) define the wire
format; written for this project with no descriptive text. `tests/test_consumer_group_codec.py`
checks the bytes they produce against a hand-written encoding of the wire format.
"""
