"""The model checker's findings about the classic protocol, driven against Apache Kafka's own
brokers: a member speaking the protocol directly (`member`), one script per finding that follows
its counterexample step by step (`scenarios`), and a two-broker cluster behind one recorder per
broker that runs them and keeps the traces (`run`). docs/bugs.md tells what each run showed.
"""
