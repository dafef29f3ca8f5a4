"""groupspec.diagrams — the state machines and sequence charts of docs/diagrams/ (docs/diagrams.md)."""
