"""Every module that implements operator or source kinds: importing this registers them all."""

from flowmagic.runtime import sql_operators  # noqa: F401 - registers the SQL kinds
from flowmagic.runtime.connectors import (  # noqa: F401 - each module registers its kinds
    file_sink,
    file_source,
    sinks,
    sources,
)
from flowmagic.runtime.operators import (  # noqa: F401 - each module registers its kinds
    broadcast,
    cache,
    interval_join,
    keyed_aggregation,
    process,
    stateless,
    two_input,
    watermark_assignment,
    window_operator,
)
