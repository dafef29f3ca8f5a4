"""groupspec.checker.spark — every use of Apache Spark (docs/spark.md), the optional extra
`groupspec[spark]`.

`bfs` is the driver's side of the level-synchronous search and `tasks` the executors';
`checkpoint` keeps levels on shared storage; `session` starts Spark quietly and ships the
package; `state_pickle` packs states compactly; `simulate` takes seeded random walks on
executors; `jobs` maps any picklable function over items, one task each (the swarm's checks);
`tables` writes a row per item as Parquet (bulk trace validation). No module outside this
package imports pyspark, and pyspark is imported only when one of these runs.
"""
