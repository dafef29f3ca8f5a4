"""groupspec.models — closed worlds that drive the specification (clients, time, faults)."""
