"""groupspec.oracle.assignor — judging assignors: adapters for third-party assignors, the
scenario suite with its property verdicts, and the z3 optimum of stickiness (docs/assignors.md).
"""
