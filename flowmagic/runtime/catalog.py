"""Every module that implements operator or source kinds: importing this registers them all."""

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
from flowmagic.runtime.sql import (  # noqa: F401 - each module registers its kinds
    batch_aggregate,
    batch_join,
    batch_rank,
    calc,
    deduplicate,
    group_aggregate,
    input_conversion,
    join,
    multiple_input,
    refusal,
    scan,
    sort,
    sort_limit,
    time_interval_join,
    watermark_assigner,
    window_aggregate,
    window_table_function,
)
from flowmagic.runtime.sql import sinks as sql_sinks  # noqa: F401 - registers the SQL sinks

# Last: the SQL kinds no module above runs refuse to start, naming their operator.
refusal.register_the_rest()
