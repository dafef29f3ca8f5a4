"""Real-client workloads that produce traces (`groupspec workload`, docs/record.md).

A workload starts a target broker (`groupspec serve`, librdkafka's mock cluster, or one you
name), puts the recording proxy in front of it, and runs a group scenario with real consumer
processes of one client library, leaving one trace per client library and scenario.
`members` runs consumer processes (`consumer`), `steps` the scenario's building blocks,
`scenarios` the named scenarios, `admins` each library's admin client, `targets` the brokers,
`runner` puts them together. The wire-server tests use the same members and steps.
"""
