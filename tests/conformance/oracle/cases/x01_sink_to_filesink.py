# sink_to a FileSink (Sink V2): expands into a writer and a committer node; neither is in the sink set.
env.set_parallelism(2)
(env.from_sequence(1, 10)
    .map(lambda x: x)
    .sink_to(FileSink.for_row_format("/tmp/out", Encoder.simple_string_encoder()).build()))
