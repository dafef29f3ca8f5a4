"""Apache Kafka's own broker, run by groupspec as the reference system (docs/kafka.md).

`install` resolves the pinned releases' jars from Maven Central into a cache (pom.xml pins them),
`settings` maps the group settings a broker starts with to broker properties and to a trace
header, `readiness` asks a starting broker whether groups can be served yet, `class_archive`
keeps the JVM's class-data sharing archive that shortens start-up, and `broker` runs one
single-node KRaft broker as a child process. `cluster` runs several brokers whose group
coordinator `leadership` moves from one to another.
"""
