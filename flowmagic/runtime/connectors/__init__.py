"""Sources and sinks, found by identifier as Flink's table factories (``factories``):
``sources`` (collection, sequence, datagen, socket, from_spark), ``file_source`` and
``file_sink`` (the ``filesystem`` connector), ``sinks`` (print, collect, sink functions,
blackhole)."""
