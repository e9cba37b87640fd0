# sink_to with name/uid/parallelism on the returned sink: "<name>: Writer"/"<name>: Committer".
env.set_parallelism(2)
(env.from_sequence(1, 10)
    .map(lambda x: x)
    .sink_to(FileSink.for_row_format("/tmp/out", Encoder.simple_string_encoder()).build())
    .name("files").uid("fs").set_parallelism(1))
