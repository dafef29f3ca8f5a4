"""Apache Kafka's own Java clients in the workloads: `JavaClient.java` (beside this module), run
by Java 17's source launcher with the 4.x release's jars from groupspec's cache.

`java_client_command("consume", ...)` is a consumer process's command line; `JavaAdmin` keeps
one admin process and asks it DescribeGroups, ListGroups and OffsetFetch, a line each. The jars
are resolved (Maven) on first use, as for the broker (record/kafka/install.py); a missing `java`
or `mvn` raises KafkaSetupError.
"""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

from groupspec.record.kafka.install import install, java_executable
from groupspec.record.kafka.settings import KAFKA_4X

SOURCE = "JavaClient.java"
# The jars a client needs: kafka-clients and the logging it binds to (its compression
# libraries are not needed: the workloads' producer, kafka-python, sends uncompressed batches).
CLIENT_JARS = ("kafka-clients-", "slf4j-api-", "slf4j-simple-")
# A consumer reads a few hundred records: C1 alone starts (and compiles the source) in about
# half the CPU time of the default tiered compilation; Kafka's own client logs only warnings.
JVM_OPTIONS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xmx256m",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
)
ADMIN_WAIT_S = 60.0


def client_classpath(libs: Path) -> str:
    """The class path of Kafka's Java client out of a release's jar folder `libs`."""
    jars = sorted(str(jar) for jar in libs.glob("*.jar") if jar.name.startswith(CLIENT_JARS))
    if not any(Path(jar).name.startswith(CLIENT_JARS[0]) for jar in jars):
        raise FileNotFoundError(f"no kafka-clients jar in {libs}")
    return ":".join(jars)


def java_client_command(*arguments: str) -> list[str]:
    """The command line that runs `JavaClient.java` with `arguments` (`consume BOOTSTRAP GROUP
    TOPIC [--assignor=NAME] [--instance-id=ID]` or `admin BOOTSTRAP`)."""
    libs = install(KAFKA_4X)
    source = resources.files(__package__) / SOURCE
    return [
        java_executable(),
        *JVM_OPTIONS,
        "-cp",
        client_classpath(libs),
        str(source),
        *arguments,
    ]


class JavaAdmin:
    """Kafka's Java Admin client in one `JavaClient.java admin` process (a GroupAdmin)."""

    def __init__(self, bootstrap: str) -> None:
        self._process = subprocess.Popen(
            java_client_command("admin", bootstrap),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def _ask(self, command: str) -> Any:
        """Send one command line; the answer's text, or RuntimeError with the client's error."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()
        while True:  # anything but the answer's JSON line (a JVM warning) is skipped
            line = self._process.stdout.readline()
            if not line:
                raise RuntimeError(f"the Java admin process ended (exit {self._process.poll()})")
            if line.startswith("{"):
                break
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["ok"]

    def describe(self, group: str) -> Any:
        """DescribeGroups: the group's state and member count."""
        return self._ask(f"describe {group}")

    def list_groups(self) -> Any:
        """ListGroups: the group ids."""
        return self._ask("list")

    def committed(self, group: str) -> Any:
        """OffsetFetch: {partition: offset}."""
        return self._ask(f"offsets {group}")

    def close(self) -> None:
        """End the process (closing its stdin closes the client)."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(ADMIN_WAIT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
