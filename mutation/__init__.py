"""groupspec.mutation — the checker's mutation score (docs/mutation.md): cosmic-ray mutants of
spec/, each judged in a copy of spec/ of its own by the reference presets' exhaustive checks.

Nothing here may run on import: the worker (`python -P -m groupspec.mutation.mutant_worker`)
starts coverage.py before it imports anything of groupspec but this package.
"""
