"""Where PyFlink 2.3 sends key_by keys in an unbounded job (a monitored FileSource).

python unbounded_routing.py DIRECTORY PARALLELISM [TUPLE]: the directory's lines are keys as
Python writes them; with TUPLE, key_by declares key_type=Types.TUPLE([Types.STRING(), Types.INT()]).
Each key prints as ``repr(key)|index of its keyed subtask``. The job runs until it is killed.
"""
import ast
import sys

from pyflink.common import Duration, Types, WatermarkStrategy
from pyflink.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from pyflink.datastream.connectors.file_system import FileSource, StreamFormat


class Where(KeyedProcessFunction):
    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()

    def process_element(self, value, ctx):
        yield f"{ctx.get_current_key()!r}|{self.index}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(int(sys.argv[2]))
source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), sys.argv[1]).monitor_continuously(
    Duration.of_seconds(1)
).build()
keys = env.from_source(source, WatermarkStrategy.no_watermarks(), "keys").map(ast.literal_eval)
key_type = Types.TUPLE([Types.STRING(), Types.INT()]) if sys.argv[3:] == ["TUPLE"] else None
keys.key_by(lambda k: k, key_type).process(Where()).print()
env.execute("unbounded routing")
