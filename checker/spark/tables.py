"""Spark writing a table: one row per item (or per group of a Parquet dataset's rows), computed
by a picklable function on the executors and written as Parquet by them, so the driver's memory
does not grow with the table; then the few figures the driver asks of it.

Bulk trace validation (oracle/trace/spark_validate.py) is its user: a verdict row per trace.
pyspark is imported only when a table is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
Row = tuple[Any, ...]
# The column types a table may have, by the name a Column gives.
KINDS = ("string", "long", "double")


@dataclass(frozen=True)
class Column:
    """One column of a table: its name, its type (one of KINDS), whether it may be empty."""

    name: str
    kind: str
    nullable: bool = True


class MissingColumns(ValueError):
    """A Parquet dataset lacks columns a job reads; `missing` names them, sorted."""

    def __init__(self, dataset: str, missing: Sequence[str]) -> None:
        super().__init__(f"{dataset}: missing columns {sorted(missing)}")
        self.missing = sorted(missing)


class Table:
    """A table Spark wrote (a Parquet dataset), read back for small questions."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    def count_by(self, column: str) -> dict[Any, int]:
        """How many rows hold each value of `column`."""
        return {row[column]: row["count"] for row in self._frame.groupBy(column).count().collect()}

    def total(self, column: str) -> Any:
        """The sum of a numeric column (None for an empty table)."""
        return self._frame.agg({column: "sum"}).collect()[0][0]

    def first(
        self,
        columns: Sequence[str],
        *,
        where: Mapping[str, object],
        order_by: str,
        limit: int,
    ) -> list[Row]:
        """Up to `limit` rows whose columns equal `where`'s values, ordered by `order_by`, as
        tuples of `columns`."""
        frame = self._frame
        for name, value in where.items():
            frame = frame.filter(frame[name] == value)
        rows = frame.orderBy(order_by).limit(limit).collect()
        return [tuple(row[name] for name in columns) for row in rows]


def map_to_parquet(
    context: Any,
    function: Callable[[T], Row],
    items: Sequence[T],
    columns: Sequence[Column],
    out: Path,
    *,
    tasks: int,
) -> Table:
    """Write the rows `function` makes of `items` (spread over `tasks` tasks) to the Parquet
    dataset `out` (replaced), and read it back."""
    rows = context.parallelize(list(items), tasks).map(function)
    return _write(context, rows, columns, out)


def map_groups_to_parquet(
    context: Any,
    dataset: str,
    *,
    key: str,
    order: str,
    value: str,
    function: Callable[[Any, Iterable[tuple[Any, Any]]], Row],
    columns: Sequence[Column],
    out: Path,
) -> Table:
    """Group the rows of the Parquet dataset `dataset` by their `key` column; write the row
    `function(key, [(order, value), ...])` makes of each group (in no particular order within
    it) to the Parquet dataset `out` (replaced), and read it back. MissingColumns when the
    dataset lacks `key`, `order` or `value`."""
    from pyspark.sql import SparkSession

    frame = SparkSession(context).read.parquet(dataset)
    missing = {key, order, value} - set(frame.columns)
    if missing:
        raise MissingColumns(dataset, sorted(missing))
    grouped = frame.select(key, order, value).rdd.map(lambda r: (r[0], (r[1], r[2]))).groupByKey()
    rows = grouped.map(lambda item: function(item[0], item[1]))
    return _write(context, rows, columns, out)


def _write(context: Any, rows: Any, columns: Sequence[Column], out: Path) -> Table:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    types = {"string": StringType(), "long": LongType(), "double": DoubleType()}
    unknown = [column.kind for column in columns if column.kind not in types]
    if unknown:
        raise ValueError(f"unknown column types {unknown}; known: {KINDS}")
    schema = StructType(
        [StructField(column.name, types[column.kind], column.nullable) for column in columns]
    )
    session = SparkSession(context)
    session.createDataFrame(rows, schema).write.mode("overwrite").parquet(str(out))
    return Table(session.read.parquet(str(out)))
