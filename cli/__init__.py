"""groupspec.cli — the `groupspec` command-line program."""
