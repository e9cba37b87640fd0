"""Records what PyFlink 2.3 does when a DataStream becomes a table (from_data_stream_pyflink.json).

Run with PyFlink 2.3 and its Python worker's packages (apache-beam) installed, not under pytest:
FLINK_HOME=<apache-flink-libraries>/deps FLINK_CONF_DIR=<a dir with a config.yaml>
_python_worker_execution_mode=process JAVA_TOOL_OPTIONS="--add-opens=java.base/java.util=ALL-UNNAMED
--add-opens=java.base/java.lang=ALL-UNNAMED" python record_from_data_stream.py OUT.json

Every stage runs in a fresh process (a fresh JVM: Transformation and ExecNode ids start at 0,
those of a fresh session).
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from pyflink.common import Duration, Row, RowKind, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.table import EnvironmentSettings, ExplainDetail, Schema, StreamTableEnvironment

TUPLES = [("a", 1), ("b", 2), ("a", 3)]
TUPLE_TYPE = Types.TUPLE([Types.STRING(), Types.INT()])
EVENTS = [("a", 1, 1000), ("b", 2, 2000), ("a", 3, 12000), ("b", 4, 13000), ("a", 5, 25000)]
EVENT_TYPE = Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])
RECORDED_WITH = {
    "recorded_with": "PyFlink 2.3.0 (apache-flink 2.3.0, local MiniCluster), "
    "tests/sql/recorded/record_from_data_stream.py"
}


class Millis(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


def fresh(parallelism=1, batch=False):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    if batch:
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t = StreamTableEnvironment.create(env, settings)
    t.get_config().set("table.local-time-zone", "UTC")
    return env, t


def schema_of(table):
    return str(table._j_table.getResolvedSchema().toString())


def rows_of(result_iterator):
    with result_iterator as it:
        return [[str(r.get_row_kind()), [repr(v) for v in r]] for r in it]


def job_graph(env):
    stream_graph = env._j_stream_execution_environment.getStreamGraph(False)
    graph = stream_graph.getJobGraph()
    return [
        {"name": v.getName(), "parallelism": v.getParallelism(), "operator_ids": v.getOperatorIDs().size()}
        for v in graph.getVerticesSortedTopologicallyFromSources()
    ]


def events(env):
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)).with_timestamp_assigner(Millis())
    return env.from_collection(EVENTS, type_info=EVENT_TYPE).assign_timestamps_and_watermarks(strategy)


def rowtime_schema():
    builder = Schema.new_builder().column_by_metadata("rowtime", "TIMESTAMP_LTZ(3)")
    return builder.watermark("rowtime", "SOURCE_WATERMARK()").build()


WINDOW_QUERY = (
    "SELECT window_start, window_end, f0, SUM(f1) AS s FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(rowtime), "
    "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, f0"
)


def schemas():
    """The schemas inferred from a stream's type information, with and without a Schema."""
    env, t = fresh()
    streams = {
        "tuple": (TUPLES, TUPLE_TYPE),
        "row_named": ([Row(name="a", v=1)], Types.ROW_NAMED(["name", "v"], [Types.STRING(), Types.LONG()])),
        "row": ([Row("a", 1)], Types.ROW([Types.STRING(), Types.INT()])),
        "int": ([1, 2], Types.INT()),
        "string": (["x"], Types.STRING()),
        "double": ([1.5], Types.DOUBLE()),
        "boolean": ([True], Types.BOOLEAN()),
    }
    found = {}
    for name, (data, type_info) in streams.items():
        found[name] = schema_of(t.from_data_stream(env.from_collection(data, type_info=type_info)))
    ds = env.from_collection(TUPLES, type_info=TUPLE_TYPE)
    found["tuple_rowtime"] = schema_of(t.from_data_stream(ds, rowtime_schema()))
    found["tuple_computed"] = schema_of(
        t.from_data_stream(ds, Schema.new_builder().column_by_expression("x", "f1 * 10").build())
    )
    found["tuple_columns"] = schema_of(
        t.from_data_stream(ds, Schema.new_builder().column("f1", "BIGINT").column("f0", "STRING").build())
    )
    return {"schemas": found}


GROUP = "SELECT f0, SUM(f1) AS s FROM v GROUP BY f0"
FILTER = "SELECT f0, f1 * 10 AS x FROM v WHERE f1 > 1"
QUERIES = {"group": GROUP, "filter": FILTER}


def view(batch=False):
    env, t = fresh(batch=batch)
    t.create_temporary_view("v", env.from_collection(TUPLES, type_info=TUPLE_TYPE))
    return env, t


def view_stage(mode, what, label):
    """EXPLAIN, EXPLAIN JSON_EXECUTION_PLAN or the rows of a query over a view of a stream."""
    batch = mode == "batch"
    query = QUERIES[label]
    _env, t = view(batch)
    if what == "explain":
        value = t.explain_sql(query)
    elif what == "explain_json":
        value = t.explain_sql(query, ExplainDetail.JSON_EXECUTION_PLAN)
    else:
        value = rows_of(t.execute_sql(query).collect())
    return {f"{mode}.{what}_{label}": value}


def changelog_job(mode):
    """The DataStream and SQL parts in one job: to_changelog_stream, then a print sink."""
    env, t = view(mode == "batch")
    t.to_changelog_stream(t.sql_query(GROUP)).print()
    return {
        f"{mode}.changelog_stream_plan": json.loads(env.get_execution_plan()),
        f"{mode}.changelog_job_graph": job_graph(env),
    }


def anonymous(what):
    """A table from_data_stream, not registered: its EXPLAIN, a query naming it, its rows."""
    env, t = fresh()
    table = t.from_data_stream(env.from_collection(TUPLES, type_info=TUPLE_TYPE))
    if what == "explain":
        return {"anonymous_explain": table.explain()}
    if what == "query_explain":
        return {"anonymous_query_explain": t.explain_sql(f"SELECT f0, f1 FROM {table} WHERE f1 > 1")}
    return {"anonymous_rows": rows_of(table.execute().collect())}


def rowtime(what):
    """The stream's timestamps and watermarks: a window over SOURCE_WATERMARK()."""
    env, t = fresh()
    t.create_temporary_view("ev", events(env), rowtime_schema())
    if what == "schema":
        return {"rowtime_schema": schema_of(t.from_path("ev"))}
    if what == "explain":
        return {"rowtime_explain": t.explain_sql(WINDOW_QUERY)}
    if what == "explain_json":
        return {"rowtime_explain_json": t.explain_sql(WINDOW_QUERY, ExplainDetail.JSON_EXECUTION_PLAN)}
    if what == "rows":
        return {"rowtime_rows": rows_of(t.execute_sql(WINDOW_QUERY).collect())}
    # PyFlink's collect() cannot hand a TIMESTAMP_LTZ to Python: the rows carry it as a TIMESTAMP.
    query = "SELECT f0, f1, CAST(rowtime AS TIMESTAMP(3)) AS ts FROM ev"
    return {"rowtime_select_rows": rows_of(t.execute_sql(query).collect())}


def named():
    """A named-row stream at parallelism 2: the vertices of the stream and the SQL parts."""
    env, t = fresh(parallelism=2)
    people = env.from_collection(
        [Row(name="a", v=1), Row(name="b", v=2), Row(name="a", v=3)],
        type_info=Types.ROW_NAMED(["name", "v"], [Types.STRING(), Types.LONG()]),
    )
    t.create_temporary_view("people", people)
    query = "SELECT name, COUNT(*) AS c FROM people GROUP BY name"
    return {"named_explain_json": t.explain_sql(query, ExplainDetail.JSON_EXECUTION_PLAN)}


def changelog(what):
    """A changelog stream (Rows with their kinds) as a table: its EXPLAIN, its rows, an aggregate."""
    env, t = fresh()
    rows = []
    for kind, name, v in (
        (RowKind.INSERT, "a", 1),
        (RowKind.INSERT, "b", 2),
        (RowKind.UPDATE_BEFORE, "a", 1),
        (RowKind.UPDATE_AFTER, "a", 5),
        (RowKind.DELETE, "b", 2),
    ):
        row = Row(name=name, v=v)
        row.set_row_kind(kind)
        rows.append(row)
    stream = env.from_collection(rows, type_info=Types.ROW_NAMED(["name", "v"], [Types.STRING(), Types.INT()]))
    t.create_temporary_view("cl", t.from_changelog_stream(stream))
    query = "SELECT name, SUM(v) AS s FROM cl GROUP BY name" if what.endswith("group") else "SELECT * FROM cl"
    if what.startswith("explain"):
        return {f"changelog_{what}": t.explain_sql(query, ExplainDetail.CHANGELOG_MODE)}
    return {f"changelog_{what}": rows_of(t.execute_sql(query).collect())}


STAGES = {"schemas": schemas, "named": named}
for _what in ("explain_all", "rows_all", "explain_group", "rows_group"):
    STAGES[f"changelog_{_what}"] = lambda w=_what: changelog(w)
for _mode in ("streaming", "batch"):
    for _what in ("explain", "explain_json", "rows"):
        for _label in QUERIES:
            STAGES[f"{_mode}.{_what}_{_label}"] = lambda m=_mode, w=_what, q=_label: view_stage(m, w, q)
    STAGES[f"{_mode}.changelog"] = lambda m=_mode: changelog_job(m)
for _what in ("explain", "query_explain", "rows"):
    STAGES[f"anonymous_{_what}"] = lambda w=_what: anonymous(w)
for _what in ("schema", "explain", "explain_json", "rows", "select_rows"):
    STAGES[f"rowtime_{_what}"] = lambda w=_what: rowtime(w)


def main():
    if sys.argv[1] == "--stage":
        Path(sys.argv[3]).write_text(json.dumps(STAGES[sys.argv[2]]()))
        return
    out = dict(RECORDED_WITH)
    for name in sys.argv[2:] or STAGES:
        with tempfile.NamedTemporaryFile(suffix=".json") as part:
            if subprocess.run([sys.executable, __file__, "--stage", name, part.name]).returncode:
                print("FAILED", name, file=sys.stderr)
                continue
            for key, value in json.loads(Path(part.name).read_text()).items():
                where = out
                *parents, last = key.split(".")
                for parent in parents:
                    where = where.setdefault(parent, {})
                where[last] = value
        # Written after every stage: a long recording keeps what it has.
        Path(sys.argv[1]).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
