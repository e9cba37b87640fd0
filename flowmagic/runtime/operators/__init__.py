"""The operators a subtask's chain runs, on one base (``operator``), each registered for its
kinds: ``stateless``, ``process``, ``keyed_aggregation``, ``watermark_assignment``,
``two_input``, ``interval_join``, ``broadcast``, ``cache``, and the window operator
(``window_operator``, with what assigners, triggers and evictors do at run time in
``window_assigner_trigger_evictor``); ``context`` is what user functions see, and
``typed_output`` converts records to an operator's declared output type."""
