"""groupspec.oracle.assignor — judging assignors: adapters for third-party assignors (kafka-python,
aiokafka, any `module:attribute`), the scenario suite, seeded random groups and their property
verdicts, and the stickiness optimum, solved twice (HiGHS and z3) (docs/assignors.md).
"""
