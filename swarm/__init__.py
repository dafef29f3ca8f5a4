"""Swarm verification (Holzmann's swarm): many small, differently configured exhaustive checks
instead of one huge one.

A space (`models/swarm_space.py`) declares the configurations; `draw.py` draws N of them from a
seed; `run.py` checks one (`check_configuration`, the pure function both engines map);
`engines.py` runs them in local processes or one per Spark task; `report.py` adds up the union
coverage and the violations. docs/swarm.md is the user's guide.
"""
