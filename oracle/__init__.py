"""groupspec.oracle — judging other people's implementations against the specification.

`trace` judges recorded coordinator traffic (docs/oracle.md); `assignor` judges any assignor's
output (docs/assignors.md). The judge never imports what it judges: only spec, wire and checker.
"""
