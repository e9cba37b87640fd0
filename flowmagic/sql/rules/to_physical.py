"""Logical nodes to Flink's physical nodes, with the exchanges their inputs need: hash on the
grouping, partition or join keys, single for a global sort, and the window aggregate's split into
a local and a global phase around its exchange."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from flowmagic.sql import cost
from flowmagic.sql import physical as ph
from flowmagic.sql.errors import TableException
from flowmagic.sql.logical import (
    AggCall,
    Field,
    LogicalAggregate,
    LogicalCalc,
    LogicalJoin,
    LogicalRank,
    LogicalSink,
    LogicalSort,
    LogicalTableFunctionScan,
    LogicalTableScan,
    LogicalUnion,
    LogicalValues,
    LogicalWatermarkAssigner,
    LogicalWindow,
    RelNode,
    WindowSpec,
    join_fields,
)
from flowmagic.sql.rex import Call, InputRef, Literal, Rex, conjunctions, inputs_used, shift
from flowmagic.sql.rules import aggregate_expand_distinct, collation
from flowmagic.sql.types import SqlType

_BATCH_LATER = "The batch planner's {} comes with a later flowmagic step; plan this query in streaming mode."


def calc(child: ph.PhysicalNode, fields: list[Field], projects: list[Rex], condition: Rex | None) -> ph.PhysicalNode:
    if isinstance(child, ph.Calc) and child.condition is None:
        inner = child

        def through(rex: Rex) -> Rex:
            return _nullability(shift(rex, lambda i: inner.projects[i]))

        merged = [through(p) for p in projects]
        where = None if condition is None else through(condition)
        return ph.Calc(inner.inputs, fields, projects=merged, condition=where)
    return ph.Calc([child], fields, projects=projects, condition=condition)


_STRICT = {"CAST", "+", "-", "*", "/"}


def _nullability(rex: Rex) -> Rex:
    """``rex`` with casts and arithmetic nullable where an operand now is (Calcite's casts match
    their operand's nullability when a program is rebuilt over new inputs)."""
    if not isinstance(rex, Call):
        return rex
    operands = tuple(_nullability(o) for o in rex.operands)
    nullable = rex.operator in _STRICT and any(o.type.nullable for o in operands)
    kind = rex.type.with_nullable(True) if nullable else rex.type
    return Call(kind, rex.operator, operands)


class ToPhysical:
    def __init__(self, streaming: bool, configuration: Mapping[str, str]) -> None:
        self.streaming = streaming
        self.configuration = configuration

    def convert(self, node: RelNode) -> ph.PhysicalNode:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise TableException(f"flowmagic cannot plan {type(node).__name__} yet")
        return method(node)

    def _LogicalTableScan(self, node: LogicalTableScan) -> ph.PhysicalNode:
        return ph.TableSourceScan(
            [],
            list(node.fields),
            path=node.path,
            reads_metadata=node.reads_metadata,
            columns=node.columns,
            extras=node.extras,
            all_kinds=node.all_kinds,
            row_count=node.row_count,
        )

    def _LogicalValues(self, node: LogicalValues) -> ph.PhysicalNode:
        return ph.Values([], list(node.fields), rows=node.rows, streaming=self.streaming)

    def _LogicalCalc(self, node: LogicalCalc) -> ph.PhysicalNode:
        source = node.inputs[0]
        child = self.convert(source)
        if (
            node.condition is not None
            and isinstance(source, LogicalTableScan)
            and source.filter_push_down
            and isinstance(child, ph.TableSourceScan)
        ):
            child.filter = node.condition
            # The source hands back what it cannot guarantee; simplified again, a disjunction
            # lists its IS NULL terms first.
            return calc(child, list(node.fields), list(node.projects), _is_null_first(node.condition))
        if not self.streaming:
            child = collation.enforce(child, collation.logical(source))
        return calc(child, list(node.fields), list(node.projects), node.condition)

    def _LogicalWatermarkAssigner(self, node: LogicalWatermarkAssigner) -> ph.PhysicalNode:
        if isinstance(node.watermark, Call) and node.watermark.operator == "SOURCE_WATERMARK":
            return self._source_watermark(node)
        return ph.WatermarkAssigner(
            [self.convert(node.inputs[0])], list(node.fields), rowtime=node.rowtime, watermark=node.watermark
        )

    def _source_watermark(self, node: LogicalWatermarkAssigner) -> ph.PhysicalNode:
        """Flink's PushWatermarkIntoTableSourceScan rules for ``SOURCE_WATERMARK()``: the
        source emits its own watermarks (a DataStream's), so no WatermarkAssigner runs; the
        projection above the scan reinterprets the rowtime column as the time attribute."""
        child = self.convert(node.inputs[0])
        scan = child.inputs[0] if isinstance(child, ph.Calc) else child
        if not isinstance(scan, ph.TableSourceScan):
            raise TableException("SOURCE_WATERMARK() needs the watermark declared on a source's own column")
        scan.extras = (*scan.extras, "watermark=[SOURCE_WATERMARK()]")
        rowtime = node.fields[node.rowtime].type
        if isinstance(child, ph.Calc):
            projects = list(child.projects)
            projects[node.rowtime] = Call(rowtime, "Reinterpret", (projects[node.rowtime],))
            return calc(child.inputs[0], list(node.fields), projects, child.condition)
        projects = [InputRef(f.type, i) for i, f in enumerate(scan.fields)]
        projects[node.rowtime] = Call(rowtime, "Reinterpret", (projects[node.rowtime],))
        return calc(scan, list(node.fields), projects, None)

    def _exchange(self, child: ph.PhysicalNode, keys: tuple[int, ...]) -> ph.PhysicalNode:
        if keys and not self.streaming:
            below = _hash_below_calc(child, keys)
            if below is not None:
                return below
        if keys:
            return ph.Exchange([child], list(child.fields), distribution="hash", keys=keys)
        return ph.Exchange([child], list(child.fields), distribution="single")

    def _LogicalAggregate(self, node: LogicalAggregate) -> ph.PhysicalNode:
        if not self.streaming:
            return self._batch_aggregate(node)
        source = node.inputs[0]
        window_scan = source.inputs[0] if isinstance(source, LogicalCalc) else source
        if isinstance(window_scan, LogicalTableFunctionScan):
            return self._window_aggregate(node, source if isinstance(source, LogicalCalc) else None, window_scan)
        child = self.convert(source)
        grouping = tuple(node.group)
        exchange = self._exchange(child, grouping)
        return ph.GroupAggregate([exchange], list(node.fields), grouping=grouping, calls=list(node.calls))

    def _batch_aggregate(self, node: LogicalAggregate) -> ph.PhysicalNode:
        if aggregate_expand_distinct.applies(node):
            return aggregate_expand_distinct.rewrite(node, self.convert(node.inputs[0]), self._aggregate)
        if any(c.distinct or c.function not in ph.LOCAL_NAMES for c in node.calls):
            raise TableException(_BATCH_LATER.format("aggregation of DISTINCT and AVG calls (Expand)"))
        child = self.convert(node.inputs[0])
        return self._aggregate(child, tuple(node.group), list(node.calls), list(node.fields))

    def _aggregate(
        self,
        child: ph.PhysicalNode,
        grouping: tuple[int, ...],
        calls: list[AggCall],
        fields: list[Field],
        sort_below: Callable[[list[tuple[int, bool, bool]]], ph.PhysicalNode] | None = None,
    ) -> ph.PhysicalNode:
        """The cheapest of the batch aggregate's plans Flink's rules offer, by its cost model.

        ``BatchPhysicalHashAggRule`` offers a hash aggregate when every accumulator has a
        fixed length (a hash table updates them in place: no MIN of a STRING, no SUM of a
        DECIMAL(38)); ``BatchPhysicalSortAggRule`` always offers a sort aggregate. With
        ``table.optimizer.agg-phase-strategy`` AUTO each comes in one phase (hash the input on
        the keys, aggregate) and in two (aggregate locally, hash the partial results, merge
        them). ``sort_below`` sorts ``child`` for a local sort aggregate (a Sort over it unless
        given)."""
        phases = self.configuration.get("table.optimizer.agg-phase-strategy", "AUTO").upper()
        strategies = (["Hash"] if _fixed_length_accumulators(child, calls) else []) + ["Sort"]
        keys = [(g, False, False) for g in range(len(grouping))]
        local_fields = [child.fields[g] for g in grouping]
        local_fields += [Field(ph.local_name(c, i), c.type.with_nullable(True)) for i, c in enumerate(calls)]
        alternatives: list[ph.PhysicalNode] = []
        for strategy in strategies:
            sorted_ = strategy == "Sort" and bool(grouping)
            if phases != "TWO_PHASE":
                merged: ph.PhysicalNode = self._exchange(child, grouping)
                if sorted_:
                    merged = ph.Sort([merged], list(merged.fields), keys=[(g, False, False) for g in grouping])
                alternatives.append(
                    ph.BatchAggregate(
                        [merged], fields, strategy=strategy, merge=False, grouping=grouping, calls=list(calls)
                    )
                )
            if phases != "ONE_PHASE":
                source = child
                if sorted_:
                    ordered = [(g, False, False) for g in grouping]
                    source = sort_below(ordered) if sort_below else ph.Sort([child], list(child.fields), keys=ordered)
                local = ph.BatchAggregate(
                    [source], local_fields, strategy=strategy, local=True, grouping=grouping, calls=list(calls)
                )
                merged = self._exchange(local, tuple(range(len(grouping))))
                if sorted_:
                    merged = ph.Sort([merged], list(merged.fields), keys=list(keys))
                alternatives.append(
                    ph.BatchAggregate(
                        [merged], fields, strategy=strategy, grouping=tuple(range(len(grouping))), calls=list(calls)
                    )
                )
        if not grouping:
            # Without keys the strategies cost the same; Flink's planner keeps the sort
            # aggregate of rows it knows (VALUES) and the hash aggregate of a table's.
            preferred = "Sort" if _rows_known_physical(child) else "Hash"
            alternatives.sort(key=lambda plan: plan.strategy != preferred if isinstance(plan, ph.BatchAggregate) else 0)
        return cost.cheapest(alternatives, child)

    def _LogicalTableFunctionScan(self, node: LogicalTableFunctionScan) -> ph.PhysicalNode:
        if self.streaming:
            raise TableException("A window table function must be aggregated by its window in streaming mode")
        if node.window is not None and node.window.kind == "SESSION":
            raise TableException("Unaligned windows like session are not supported in batch mode yet.")
        return ph.WindowTableFunction([self.convert(node.inputs[0])], list(node.fields), window=node.window)

    def _window_aggregate(
        self, node: LogicalAggregate, projection: LogicalCalc | None, scan: LogicalTableFunctionScan
    ) -> ph.PhysicalNode:
        assert scan.window is not None
        width = len(scan.inputs[0].fields)
        window = scan.window
        child = self.convert(scan.inputs[0])

        def property_of(index: int) -> str | None:
            rex = projection.projects[index] if projection is not None else InputRef(scan.fields[index].type, index)
            return scan.fields[rex.index].name if isinstance(rex, InputRef) and rex.index >= width else None

        positions: dict[int, int] = {}
        if projection is not None and any(not isinstance(r, InputRef) for r in projection.projects):
            # Computed columns (a FILTER's condition, say) are computed below the window
            # aggregate, with the window's time column last when the columns leave it out.
            # Whether Flink merges such a Calc with one below the window is not recorded yet.
            if projection.condition is not None or isinstance(child, ph.Calc):
                raise TableException("Window aggregates over computed expressions are not supported by flowmagic yet")
            projects: list[Rex] = []
            fields: list[Field] = []
            for i, rex in enumerate(projection.projects):
                if property_of(i) is None:
                    if any(a >= width for a in inputs_used(rex)):
                        raise TableException("Expressions of window properties are not supported by flowmagic yet")
                    positions[i] = len(projects)
                    projects.append(rex)
                    fields.append(projection.fields[i])
            time = InputRef(child.fields[window.time_column].type, window.time_column)
            if time not in projects:
                projects.append(time)
                fields.append(child.fields[window.time_column])
            child = ph.Calc([child], fields, projects=projects)
            window = replace(window, time_column=projects.index(time))

        def through(index: int) -> int:
            if positions:
                return positions[index] if property_of(index) is None else index
            if projection is None:
                return index
            rex = projection.projects[index]
            if not isinstance(rex, InputRef) or projection.condition is not None:
                raise TableException("Window aggregates over computed expressions are not supported by flowmagic yet")
            return rex.index

        keys: list[int] = []
        properties: list[str] = []
        for g in node.group:
            name = property_of(g)
            if name is not None:
                properties.append(name)
            else:
                keys.append(through(g))
        if "window_start" not in properties or "window_end" not in properties:
            raise TableException("A window table function must be grouped by window_start and window_end in flowmagic")
        calls = [
            AggCall(
                c.function,
                tuple(through(a) for a in c.args),
                c.distinct,
                c.type,
                c.name,
                None if c.filter is None else through(c.filter),
            )
            for c in node.calls
        ]
        if any(c.distinct or c.function not in ph.LOCAL_NAMES for c in calls):
            raise TableException("This window aggregate function is not supported by flowmagic yet")

        def resolve(index: int) -> str | int:
            return property_of(index) or through(index)

        if scan.window.kind == "SESSION":
            return self._session_aggregate(node, child, keys, calls, properties, scan, window, resolve)
        local_fields = [child.fields[k] for k in keys]
        # Partial accumulators are nullable; the slice end is epoch milliseconds.
        local_fields += [Field(ph.local_name(c, i), c.type.with_nullable(True)) for i, c in enumerate(calls)]
        local_fields.append(Field("$slice_end", SqlType("BIGINT")))
        local = ph.LocalWindowAggregate([child], local_fields, grouping=tuple(keys), calls=calls, window=window)
        exchange = self._exchange(local, tuple(range(len(keys))))
        global_fields = [child.fields[k] for k in keys] + [Field(c.name, c.type) for c in calls]
        global_fields += [
            scan.fields[width + ["window_start", "window_end", "window_time"].index(p)] for p in properties
        ]
        aggregate = ph.GlobalWindowAggregate(
            [exchange],
            global_fields,
            grouping=tuple(range(len(keys))),
            calls=calls,
            window=window,
            properties=tuple(properties),
        )
        return self._window_output(node, aggregate, keys, calls, properties, resolve)

    def _window_output(
        self,
        node: LogicalAggregate,
        aggregate: ph.PhysicalNode,
        keys: list[int],
        calls: list[AggCall],
        properties: list[str],
        resolve: Callable[[int], str | int],
    ) -> ph.PhysicalNode:
        """The aggregate's columns in the query's order (keys, calls, then window properties);
        ``resolve`` names a group column's window property or gives its key's input field."""
        projects: list[Rex] = []
        for g in node.group:
            target = resolve(g)
            index = len(keys) + len(calls) + properties.index(target) if isinstance(target, str) else keys.index(target)
            projects.append(InputRef(aggregate.fields[index].type, index))
        projects += [InputRef(c.type, len(keys) + i) for i, c in enumerate(calls)]
        identity = all(isinstance(p, InputRef) and p.index == i for i, p in enumerate(projects))
        if identity and len(projects) == len(aggregate.fields):
            return aggregate
        return ph.Calc([aggregate], list(node.fields), projects=projects)

    def _session_aggregate(
        self,
        node: LogicalAggregate,
        child: ph.PhysicalNode,
        keys: list[int],
        calls: list[AggCall],
        properties: list[str],
        scan: LogicalTableFunctionScan,
        window: WindowSpec,
        resolve: Callable[[int], str | int],
    ) -> ph.PhysicalNode:
        width = len(scan.inputs[0].fields)
        exchange = self._exchange(child, tuple(keys))
        fields = [child.fields[k] for k in keys] + [Field(c.name, c.type) for c in calls]
        fields += [scan.fields[width + ["window_start", "window_end", "window_time"].index(p)] for p in properties]
        aggregate = ph.WindowAggregate(
            [exchange], fields, grouping=tuple(keys), calls=calls, window=window, properties=tuple(properties)
        )
        return self._window_output(node, aggregate, keys, calls, properties, resolve)

    def _batch_join(self, node: LogicalJoin) -> ph.PhysicalNode:
        """Joins of inputs whose rows the planner knows (VALUES) loop over the smaller side,
        broadcast; an outer join builds its null-padded side; a full outer join gathers both.
        Flink's cost model picks these for such inputs."""
        if not all(_rows_known(i) for i in node.inputs):
            return self._hash_join(node)
        left, right = (self.convert(i) for i in node.inputs)
        fields = join_fields(left.fields, right.fields, node.join_type)
        if node.join_type == "full":
            gathered: list[ph.PhysicalNode] = [
                ph.Exchange([s], list(s.fields), distribution="single") for s in (left, right)
            ]
            return ph.NestedLoopJoin(gathered, fields, join_type="full", condition=node.condition, build="right")
        if node.join_type == "left":
            build = "right"
        elif node.join_type == "right":
            build = "left"
        else:
            build = "left" if _estimated_rows(node.inputs[0]) < _estimated_rows(node.inputs[1]) else "right"
        inputs: list[ph.PhysicalNode]
        if build == "left":
            inputs = [ph.Exchange([left], list(left.fields), distribution="broadcast"), right]
        else:
            inputs = [left, ph.Exchange([right], list(right.fields), distribution="broadcast")]
        return ph.NestedLoopJoin(inputs, fields, join_type=node.join_type, condition=node.condition, build=build)

    def _hash_join(self, node: LogicalJoin) -> ph.PhysicalNode:
        """A join of tables hashes both inputs on its keys and builds a hash table of one side.
        Flink's cost model on tables of unknown size (the same default row count on both
        sides) prefers this to a sort-merge join (no sorts) and to a broadcast (the build side
        is above ``table.optimizer.join.broadcast-threshold``), and builds the left side of the
        tie. Its AdaptiveJoinProcessor (``table.optimizer.adaptive-broadcast-join.strategy``
        ``auto``) then leaves the choice of broadcasting to the runtime: an AdaptiveJoin in the
        execution plan. A join whose input ends in a Calc above its exchange stays a HashJoin:
        the MultipleInputNodeCreationProcessor fuses it with that Calc, which Flink's
        AdaptiveJoinProcessor does not turn adaptive (an input is not an exchange)."""
        left, right = (self.convert(i) for i in node.inputs)
        parts = conjunctions(node.condition) if node.condition is not None else []
        left_keys, right_keys = _equi_keys(parts, len(left.fields))
        if not left_keys or node.join_type != "inner":
            raise TableException(_BATCH_LATER.format("joins of tables without keys or outer (SortMergeJoin)"))
        inputs = [self._exchange(left, tuple(left_keys)), self._exchange(right, tuple(right_keys))]
        adaptive = all(isinstance(i, ph.Exchange) for i in inputs)
        fields = join_fields(left.fields, right.fields, node.join_type)
        return ph.HashJoin(
            inputs, fields, join_type=node.join_type, condition=node.condition, build="left", adaptive=adaptive
        )

    def _LogicalJoin(self, node: LogicalJoin) -> ph.PhysicalNode:
        if not self.streaming:
            return self._batch_join(node)
        left, right = (self.convert(i) for i in node.inputs)
        parts = conjunctions(node.condition) if node.condition is not None else []
        left_keys, right_keys = _equi_keys(parts, len(left.fields))
        fields = join_fields(left.fields, right.fields, node.join_type)
        inputs = [self._exchange(left, tuple(left_keys)), self._exchange(right, tuple(right_keys))]
        bounds = _interval_bounds(parts, left, right)
        if bounds is not None:
            lower, upper, left_time, right_time, rowtime = bounds
            return ph.IntervalJoin(
                inputs,
                fields,
                join_type=node.join_type,
                condition=node.condition,
                rowtime=rowtime,
                lower=lower,
                upper=upper,
                left_time=left_time,
                right_time=right_time,
            )
        return ph.Join(inputs, fields, join_type=node.join_type, condition=node.condition)

    def _LogicalRank(self, node: LogicalRank) -> ph.PhysicalNode:
        if not self.streaming:
            child = self.convert(node.inputs[0])
            keys = [(p, False, False) for p in node.partition] + list(node.order)

            def phase(inputs: list[ph.PhysicalNode], fields: list[Field], is_global: bool) -> ph.BatchRank:
                return ph.BatchRank(
                    inputs,
                    fields,
                    function=node.function,
                    partition=node.partition,
                    order=node.order,
                    rank_start=node.rank_start,
                    rank_end=node.rank_end,
                    is_global=is_global,
                )

            local = phase([ph.Sort([child], list(child.fields), keys=keys)], list(child.fields), False)
            merged = self._exchange(local, node.partition)
            return phase([ph.Sort([merged], list(merged.fields), keys=keys)], list(node.fields), True)
        child = self.convert(node.inputs[0])
        return ph.Rank(
            [self._exchange(child, node.partition)],
            list(node.fields),
            partition=node.partition,
            order=node.order,
            rank_start=node.rank_start,
            rank_end=node.rank_end,
            output_rank=node.output_rank,
        )

    def _LogicalWindow(self, node: LogicalWindow) -> ph.PhysicalNode:
        child = self._exchange(self.convert(node.inputs[0]), node.partition)
        keys = [(p, False, False) for p in node.partition] + list(node.order)
        ordered = ph.Sort([child], list(child.fields), keys=keys)
        return ph.OverAggregate(
            [ordered], list(node.fields), partition=node.partition, order=node.order, calls=node.calls
        )

    def _LogicalSort(self, node: LogicalSort) -> ph.PhysicalNode:
        if not self.streaming:
            child = self.convert(node.inputs[0])
            if node.fetch is None and not node.offset:
                # A global sort gathers its input, which must still arrive in the order its
                # logical input promised.
                gathered = collation.enforce(self._exchange(child, ()), collation.logical(node.inputs[0]))
                return ph.Sort([gathered], list(node.fields), keys=node.keys)
            if node.fetch is None:
                raise TableException(_BATCH_LATER.format("sort with OFFSET and without LIMIT"))
            offset = node.offset or 0
            local = ph.SortLimit(
                [child], list(child.fields), keys=node.keys, offset=0, fetch=offset + node.fetch, batch_global=False
            )
            gathered = self._exchange(local, ())
            return ph.SortLimit(
                [gathered], list(node.fields), keys=node.keys, offset=offset, fetch=node.fetch, batch_global=True
            )
        if node.fetch is None:
            raise TableException("Sort on a non-time-attribute field is not supported.")
        child = self.convert(node.inputs[0])
        exchange = self._exchange(child, ())
        return ph.SortLimit([exchange], list(node.fields), keys=node.keys, offset=node.offset or 0, fetch=node.fetch)

    def _LogicalUnion(self, node: LogicalUnion) -> ph.PhysicalNode:
        return ph.Union([self.convert(i) for i in node.inputs], list(node.fields))

    def _LogicalSink(self, node: LogicalSink) -> ph.PhysicalNode:
        # A sink's node prints (and passes on) the field names of what it writes.
        child = self.convert(node.inputs[0])
        return ph.Sink([child], list(child.fields), table=node.table, connector=node.connector, accepts=node.accepts)


def _hash_below_calc(child: ph.PhysicalNode, keys: tuple[int, ...]) -> ph.PhysicalNode | None:
    """A batch hash exchange below a projection, where Flink's cost model puts it.

    ``BatchPhysicalCalcBase.satisfyTraits`` passes a hash requirement on plain field references
    down to the Calc's input; the Volcano planner then keeps the cheaper of the exchange above or
    below the Calc. Below costs the same rows and fewer bytes when the Calc filters nothing and
    only adds columns to its input's (every input column passes through). It costs an extra Sort
    when the input promises an order (VALUES), which the Calc still asks of its input (see
    ``collation``), so the exchange then stays above. flowmagic moves it in exactly that case."""
    if not isinstance(child, ph.Calc) or child.condition is not None:
        return None
    source = child.inputs[0]
    passed = {p.index: i for i, p in enumerate(child.projects) if isinstance(p, InputRef)}
    adds_columns = len(child.projects) > len(source.fields)
    if not adds_columns or set(passed) != set(range(len(source.fields))) or collation.provided(source):
        return None
    through = [child.projects[k] for k in keys]
    if not all(isinstance(p, InputRef) for p in through):
        return None
    input_keys = tuple(p.index for p in through if isinstance(p, InputRef))
    exchange = ph.Exchange([source], list(source.fields), distribution="hash", keys=input_keys)
    return ph.Calc([exchange], list(child.fields), projects=list(child.projects))


def _is_null_first(condition: Rex) -> Rex:
    if isinstance(condition, Call) and condition.operator == "OR":
        ordered = sorted(condition.operands, key=lambda o: not (isinstance(o, Call) and o.operator == "IS NULL"))
        return Call(condition.type, "OR", tuple(ordered))
    return condition


def _equi_keys(parts: list[Rex], width: int) -> tuple[list[int], list[int]]:
    """The left and right key fields of a join condition's ``left = right`` conjunctions."""
    left_keys: list[int] = []
    right_keys: list[int] = []
    for part in parts:
        if isinstance(part, Call) and part.operator == "=":
            a, b = part.operands
            if isinstance(a, InputRef) and isinstance(b, InputRef):
                if a.index < width <= b.index:
                    left_keys.append(a.index)
                    right_keys.append(b.index - width)
                elif b.index < width <= a.index:
                    left_keys.append(b.index)
                    right_keys.append(a.index - width)
    return left_keys, right_keys


_IN_PLACE_TYPES = {
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "REAL",
    "FLOAT",
    "DOUBLE",
    "DATE",
    "TIME",
    "DECIMAL",
}


def _updates_in_place(kind: SqlType) -> bool:
    """Whether a binary row holds a value of ``kind`` at a fixed place, updatable there (Flink's
    ``BinaryRowData.isMutable``): numbers, dates, times, intervals, decimals, timestamps of at
    most millisecond precision; not strings."""
    if kind.name in _IN_PLACE_TYPES or kind.is_interval:
        return True
    if kind.name in ("TIMESTAMP", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return (kind.precision if kind.precision is not None else 6) <= 3
    return False


def _fixed_length_accumulators(child: ph.PhysicalNode, calls: list[AggCall]) -> bool:
    """Flink's ``AggregateUtil.isAggBufferFixedLength``: a COUNT keeps a BIGINT, a SUM its
    result, a MIN or MAX a value of its argument's type."""
    for call in calls:
        if call.function == "COUNT":
            continue
        buffer = child.fields[call.args[0]].type if call.function in ("MIN", "MAX") else call.type
        if not _updates_in_place(buffer):
            return False
    return True


def _rows_known_physical(node: ph.PhysicalNode) -> bool:
    """Whether every row of physical ``node`` comes from VALUES."""
    if isinstance(node, ph.Values):
        return True
    return bool(node.inputs) and all(_rows_known_physical(i) for i in node.inputs)


def _rows_known(node: RelNode) -> bool:
    """Whether every row of ``node`` comes from VALUES (the planner knows how many there are)."""
    if isinstance(node, LogicalValues):
        return True
    return bool(node.inputs) and all(_rows_known(i) for i in node.inputs)


def _estimated_rows(node: RelNode) -> float:
    """Calcite's row count estimate: VALUES count, a filter keeps half (its default selectivity)."""
    if isinstance(node, LogicalValues):
        return float(len(node.rows))
    rows = min(_estimated_rows(i) for i in node.inputs) if node.inputs else 1.0
    return rows / 2 if isinstance(node, LogicalCalc) and node.condition is not None else rows


def _time_operand(rex: Rex, left: ph.PhysicalNode, right: ph.PhysicalNode) -> tuple[str, int, int] | None:
    """(side, field, offset in ms) of ``ts`` or ``ts +/- INTERVAL``, for a time attribute."""
    width = len(left.fields)
    offset = 0
    if isinstance(rex, Call) and rex.operator in ("+", "-") and isinstance(rex.operands[1], Literal):
        value = int(str(rex.operands[1].value))
        offset = value if rex.operator == "+" else -value
        rex = rex.operands[0]
    if not isinstance(rex, InputRef):
        return None
    fields = left.fields + right.fields
    if fields[rex.index].type.time_attribute is None:
        return None
    return ("left", rex.index, offset) if rex.index < width else ("right", rex.index - width, offset)


def _interval_bounds(
    parts: list[Rex], left: ph.PhysicalNode, right: ph.PhysicalNode
) -> tuple[int, int, int, int, bool] | None:
    lower = upper = None
    left_time = right_time = -1
    flipped = {">=": "<=", "<=": ">=", ">": "<", "<": ">"}
    for part in parts:
        if not (isinstance(part, Call) and part.operator in flipped):
            continue
        a = _time_operand(part.operands[0], left, right)
        b = _time_operand(part.operands[1], left, right)
        if a is None or b is None or a[0] == b[0]:
            continue
        operator = part.operator
        if a[0] == "right":
            a, b = b, a
            operator = flipped[operator]
        left_time, right_time = a[1], b[1]
        bound = b[2] - a[2]
        if operator == ">=":
            lower = bound
        elif operator == ">":
            lower = bound + 1
        elif operator == "<=":
            upper = bound
        else:
            upper = bound - 1
    if lower is None or upper is None:
        return None
    rowtime = left.fields[left_time].type.time_attribute == "ROWTIME"
    return lower, upper, left_time, right_time, rowtime


def convert(rel: RelNode, streaming: bool, configuration: Mapping[str, str] | None = None) -> ph.PhysicalNode:
    return ToPhysical(streaming, configuration or {}).convert(rel)
