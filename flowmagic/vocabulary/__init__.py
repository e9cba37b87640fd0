"""The vocabulary of a streaming program: what its builder writes and its runtime runs.

User functions, record types, windows (assigners, triggers, evictors, the window objects),
state descriptors and TTL, time and watermark strategies, the join and broadcast functions,
the file sink's policies, restart strategies, option values and the pipeline's settings
(``PipelineConfig``). A leaf: it imports nothing above :mod:`flowmagic.graph`, so that every
front end (the DataStream builder in :mod:`flowmagic.api`, SQL) and the runtime share it
without importing each other. PyFlink's module names over it are :mod:`flowmagic.common`
and :mod:`flowmagic.datastream`.
"""
