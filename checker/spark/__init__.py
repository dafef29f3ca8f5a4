"""groupspec.checker.spark — the exploration engine on Apache Spark (docs/spark.md).

`bfs` is the driver's side of the level-synchronous search and `tasks` the executors'; `checkpoint`
keeps levels on shared storage; `session` starts Spark quietly and ships the package;
`state_pickle` packs states compactly; `simulate` takes seeded random walks on executors.
pyspark is imported only when one of them runs.
"""
