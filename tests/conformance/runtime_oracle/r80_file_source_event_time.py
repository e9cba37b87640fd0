# from_source(FileSource) with a timestamp assigner in its watermark strategy: the lines of every visible
# file under a directory (recursively; "\n", "\r\n" and "\r" end lines), into event-time windows.
import os
import tempfile

from flowmagic.common.watermark_strategy import TimestampAssigner
from flowmagic.datastream.connectors.file_system import FileSource, StreamFormat

directory = tempfile.mkdtemp()
os.makedirs(os.path.join(directory, "day2"))
with open(os.path.join(directory, "day1.csv"), "w", newline="") as f:
    f.write("1000,a,1\n4000,b,2\r\n9000,a,3\n")
with open(os.path.join(directory, "day2", "more.csv"), "w", newline="") as f:
    f.write("12000,a,4\r15000,b,5\n21000,a,6")
with open(os.path.join(directory, ".hidden.csv"), "w") as f:
    f.write("5000,a,100\n")


class First(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return int(value.split(",")[0])


env.set_parallelism(2)
strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(30)).with_timestamp_assigner(First())
source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), directory).build()
result = (env.from_source(source, strategy, "events")
          .map(lambda line: (line.split(",")[1], int(line.split(",")[2])),
               output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
          .key_by(lambda t: t[0])
          .window(TumblingEventTimeWindows.of(Time.seconds(10)))
          .reduce(lambda x, y: (x[0], x[1] + y[1])))
