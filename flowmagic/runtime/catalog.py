"""Every module that implements operator or source kinds: importing this registers them all."""

from flowmagic.runtime import (  # noqa: F401 - each module registers its kinds
    broadcast,
    cache,
    file_sink,
    file_source,
    interval_join,
    keyed_aggregation,
    process,
    sinks,
    sources,
    sql_operators,
    stateless,
    two_input,
    watermark_assignment,
    windowing,
)
