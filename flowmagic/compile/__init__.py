"""The passes that turn a program into graphs, one module per pass.

``stream_graph_generator`` (with ``translators``) -> ``job_graph_generator`` (with
``chaining`` and ``hashing``) -> ``execution_graph_builder``; ``key_groups`` holds
Flink's key routing, shared with the runtime.
"""
