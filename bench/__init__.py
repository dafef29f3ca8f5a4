"""groupspec.bench — every benchmark, reported as figures against a baseline of the same run."""
