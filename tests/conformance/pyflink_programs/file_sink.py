# Recorded with PyFlink 2.3.0 (python file_sink.py OUT); what it wrote is ../pyflink_file_sink.json.
import sys, os
from pyflink.common import Encoder, Types, Row
from pyflink.datastream import StreamExecutionEnvironment, RuntimeExecutionMode
from pyflink.datastream.connectors.file_system import FileSink, OutputFileConfig, RollingPolicy, BucketAssigner

out = sys.argv[1]

def sink(path, assigner=None, rolling=None, config=None):
    b = FileSink.for_row_format(path, Encoder.simple_string_encoder())
    if assigner is not None:
        b = b.with_bucket_assigner(assigner)
    if rolling is not None:
        b = b.with_rolling_policy(rolling)
    if config is not None:
        b = b.with_output_file_config(config)
    return b.build()

env = StreamExecutionEnvironment.get_execution_environment()
env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
env.set_parallelism(1)
tuples = [(f"w{i}", i) for i in range(40)]
env.from_collection(tuples, type_info=Types.TUPLE([Types.STRING(), Types.INT()])).sink_to(
    sink(out + "/tuples_rolled", BucketAssigner.base_path_bucket_assigner(), RollingPolicy.default_rolling_policy(part_size=50)))
env.from_collection([Row("a", 1, 2.5, True, None), Row("b", -2, 1e20, False, "x")],
    type_info=Types.ROW_NAMED(["s", "i", "d", "b", "n"], [Types.STRING(), Types.INT(), Types.DOUBLE(), Types.BOOLEAN(), Types.STRING()])).sink_to(
    sink(out + "/rows", config=OutputFileConfig.builder().with_part_prefix("pre").build()))
env.from_collection(["x", "ü", "y"], type_info=Types.STRING()).sink_to(
    sink(out + "/strings", BucketAssigner.date_time_bucket_assigner("yyyy/MM/dd 'at' HH", "UTC"), config=OutputFileConfig.builder().with_part_suffix(".txt").build()))
env.from_collection([("a", 1), ("b", 2)]).sink_to(sink(out + "/pickled", BucketAssigner.base_path_bucket_assigner()))
env.from_collection([(1, [1, 2], {"k": 1.5})], type_info=Types.TUPLE([Types.LONG(), Types.LIST(Types.INT()), Types.MAP(Types.STRING(), Types.FLOAT())])).sink_to(
    sink(out + "/nested", BucketAssigner.base_path_bucket_assigner()))
env.execute()

env2 = StreamExecutionEnvironment.get_execution_environment()
env2.set_parallelism(2)
env2.from_collection([f"line{i}" for i in range(10)], type_info=Types.STRING()).sink_to(
    sink(out + "/two_writers", BucketAssigner.base_path_bucket_assigner()))
env2.execute()
