"""Records what PyFlink 2.3 does when tables and DataStreams bridge (bridges_pyflink.json).

Run with PyFlink 2.3 (not under pytest): FLINK_HOME=<apache-flink-libraries>/deps FLINK_CONF_DIR=<a dir with a
config.yaml> _python_worker_execution_mode=process JAVA_TOOL_OPTIONS="--add-opens=java.base/java.util=ALL-UNNAMED
--add-opens=java.base/java.lang=ALL-UNNAMED" python record_bridges.py
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t = StreamTableEnvironment.create(env)
ds = env.from_collection([("a", 1), ("b", 2), ("a", 3)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
tab = t.from_data_stream(ds)
print("SCHEMA", repr(str(tab.get_schema())))
t.create_temporary_view("v", ds)
res = t.sql_query("SELECT f0, SUM(f1) AS s FROM v GROUP BY f0")
try:
    t.to_data_stream(res)
except Exception as e:
    print("TO_DS_ERR", str(e).splitlines()[:3])
cs = t.to_changelog_stream(res)
print("CS_TYPE", cs.get_type())
with cs.execute_and_collect() as it:
    for r in it:
        print("ROW", r.get_row_kind(), r, repr(r))
ins = t.sql_query("SELECT f0, f1 * 10 AS x FROM v WHERE f1 > 1")
ds2 = t.to_data_stream(ins)
print("DS2_TYPE", ds2.get_type())
with ds2.execute_and_collect() as it:
    for r in it:
        print("ROW2", r.get_row_kind(), r, repr(r))
print("PLAN", env.get_execution_plan()[:3000])
