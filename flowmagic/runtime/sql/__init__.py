"""Flink SQL at run time: the operators of the ``sql.*`` kinds, over rows of Flink's types.

The contract every SQL operator (and every helper adding one) keeps:

- **Layers.** ``flowmagic/runtime/`` never imports the planner (``flowmagic.sql``) nor
  ``flowmagic.table``. As Flink's planner generates code for flink-table-runtime, the planner
  (:mod:`flowmagic.sql.codegen`) turns each ExecNode into a plain-data, picklable spec
  (:mod:`flowmagic.graph.sql_runtime`) carried in ``SqlOperatorParams.runtime``: expressions as
  Python source it generated in-process (never read from a file, a savepoint or the network),
  compiled here by :func:`~flowmagic.runtime.sql.operator.compile_code` with the namespace of
  Flink-semantics built-ins of :mod:`flowmagic.runtime.sql.functions`; types as Flink's type
  strings (:mod:`flowmagic.runtime.sql.values` reads them and writes values as Flink does).
- **Rows.** Between SQL operators a row is a plain tuple of its fields with its row kind last,
  an int: ``INSERT`` 0 (``+I``), ``UPDATE_BEFORE`` 1 (``-U``), ``UPDATE_AFTER`` 2 (``+U``),
  ``DELETE`` 3 (``-D``), Flink's ``RowKind`` byte values (:mod:`flowmagic.runtime.sql.operator`).
  Generated code reads field ``i`` as ``r[i]`` and keeps ``r[-1]``. Values are plain Python
  objects (int, float, ``Decimal`` at its scale, str, bool, None; TIMESTAMP and TIMESTAMP_LTZ
  as int epoch milliseconds). ``Row`` objects with ``get_row_kind()`` are made only at the API
  edge (``TableResult.collect()``, ``to_changelog_stream()``).
- **Keys.** A keyed SQL operator's key is what its transformation's key selector returns for a
  row (the hash exchange's key fields): the same key routes the row, scopes the state, and
  files the state by key group in checkpoints.
- **State.** Operator state goes through the keyed state backend under Flink's state names
  (a GroupAggFunction's ``accState``), so that the continuous mode's checkpoints,
  savepoints, restore by operator ID and the restore check work unchanged.
- **Results.** Rows must be Flink's recorded rows (tests/conformance/sql), on the local
  executor and on Spark alike. A kind not implemented yet refuses to start in one line naming
  its operator (:mod:`flowmagic.runtime.sql.refusal`).
- **Adding an operator.** A module here registers its class for its ``sql.*`` kind
  (``@register``; :mod:`flowmagic.runtime.catalog` imports it, before the refusal takes the
  kinds left); the planner's :func:`flowmagic.sql.runtime_spec.runtime_spec` fills its spec (a
  dataclass of :mod:`flowmagic.graph.sql_runtime`). Operators derive from
  :class:`~flowmagic.runtime.sql.operator.SqlOperator`; sources from the connectors' ``Source``.
"""
