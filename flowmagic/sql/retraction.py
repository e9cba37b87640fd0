"""Why does this query retract? The answer, from the changelog modes the planner derived.

Flink's planner knows, node by node, which kinds of rows a streaming plan emits (``EXPLAIN
CHANGELOG_MODE`` prints them), but its tools never say why a result holds ``-U``/``+U``/``-D``
rows, nor how to avoid them; its only word on it is an error when an insert-only sink cannot
take them ("Table sink ... doesn't support consuming update changes which is produced by node
GroupAggregate(...)"). This module reads those modes and tells, as plain data:

* the plan node where updates or deletes first appear (the node that makes them from insert-only
  input, e.g. a regular ``GroupAggregate``), and the nodes that carry them on to the sink;
* what the sink takes (a query's collected result and a ``print`` table every kind, a
  ``blackhole`` table every kind but ``-U``, a ``filesystem`` table inserts only);
* the usual rewrites that keep the result insert-only (a window aggregate instead of a regular
  one on a time attribute, deduplication keeping the first row, Window Top-N, an interval join).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from flowmagic.sql import physical as ph
from flowmagic.sql.exec_nodes import ExecNode, nodes
from flowmagic.sql.rules import changelog

__all__ = ["KINDS", "Retraction", "RetractionOrigin", "SinkRequirement", "explain_retraction"]

#: The planner's changelog modes as Flink's row kinds print them, in Flink's order.
KINDS = {"I": "+I", "UB": "-U", "UA": "+U", "D": "-D"}
_CHANGES = ("UB", "UA", "D")
#: What a sink takes (its connector's changelog mode), in a sentence.
_SINK_WORDING = {
    ("I", "UB", "UA", "D"): "takes every kind of row",
    ("I", "UA", "D"): "takes inserts, updates without their old row (+U) and deletes",
    ("I",): "takes inserts only",
}


@dataclass(frozen=True)
class SinkRequirement:
    """What the statement's sink takes."""

    #: ``collect`` (a query's result: ``print()``, ``collect()``, the cell's view) or the connector.
    connector: str
    #: The sink as a user names it: "the query's collected result" or "table 'name' (print)".
    name: str
    #: The sink table's full name (empty for a query's result).
    table: str
    #: The row kinds it takes, as Flink prints them (``+I``, ``-U``, ``+U``, ``-D``).
    accepts: tuple[str, ...]
    #: One sentence on what it takes.
    wording: str


@dataclass(frozen=True)
class RetractionOrigin:
    """A plan node where updates or deletes first appear: its inputs are insert-only."""

    exec_node_id: int
    #: The ExecNode's name, as Flink names its operator without the id (``GroupAggregate``).
    name: str
    #: The node's line in the Optimized Execution Plan.
    description: str
    #: The kinds it emits to its consumer in this statement (``+I``, ``-U``, ``+U`` ...).
    kinds: tuple[str, ...]
    #: Why this kind of node updates or deletes what it emitted.
    reason: str

    @property
    def operator(self) -> str:
        """Flink's operator name: ``GroupAggregate[3]``."""
        return f"{self.name}[{self.exec_node_id}]"


@dataclass(frozen=True)
class Retraction:
    """The answer for one statement; ``str()`` gives it as text."""

    streaming: bool
    #: The kinds of rows the sink receives.
    result_kinds: tuple[str, ...]
    #: Where updates or deletes first appear, in plan order (none: the result is insert-only).
    origins: tuple[RetractionOrigin, ...]
    #: Nodes above an origin that would update by themselves even on insert-only input (a
    #: GROUP BY over a LEFT JOIN): rewriting the origin alone leaves their updates.
    later: tuple[RetractionOrigin, ...]
    #: The operators above an origin that carry its updates on to the sink (``Calc[4]`` ...).
    carried_by: tuple[str, ...]
    sink: SinkRequirement
    #: The node the sink reads, as Flink's planner describes it in its errors.
    sink_input: str
    #: Rewrites that make the origins' output insert-only, most specific first.
    rewrites: tuple[str, ...]

    @property
    def retracts(self) -> bool:
        """Whether the sink receives anything but inserts."""
        return any(kind != "+I" for kind in self.result_kinds)

    @property
    def sink_refuses(self) -> bool:
        """Whether the sink cannot take what the query emits (Flink rejects the statement)."""
        return any(kind not in self.sink.accepts for kind in self.result_kinds)

    def summary(self) -> str:
        """One line: whether the query retracts, and where that starts."""
        if not self.streaming:
            return "This query never retracts: in batch mode its result is computed once, inserts (+I) only."
        if not self.retracts:
            return "This query never retracts: every node of its plan emits inserts (+I) only."
        origins = ", ".join(origin.operator for origin in self.origins)
        return f"This query retracts: its result holds {', '.join(self.result_kinds)} rows, starting at {origins}."

    def refusal(self) -> str:
        """Flink's error for a sink that cannot take the updates (see :attr:`sink_refuses`)."""
        changes = ["update", "delete"] if "-D" in self.result_kinds else ["update"]
        return "Flink rejects this statement: " + changelog.refusal(self.sink.table, changes, self.sink_input)

    def lines(self, sink: bool = True) -> list[str]:
        """The answer, line by line (without a title); without what the sink takes when not
        ``sink`` (the answer for a query planned without the sink that refused it)."""
        lines = [self.summary()]
        if self.streaming and self.retracts:
            for origin in (*self.origins, *self.later):
                lines.append(f"{origin.operator} emits {', '.join(origin.kinds)}: {origin.description}")
                lines.append(f"  {origin.reason}")
            if self.carried_by:
                lines.append(f"Carried to the sink by: {', '.join(self.carried_by)}.")
        if sink:
            lines.append(f"The sink, {self.sink.name}, {self.sink.wording} ({', '.join(self.sink.accepts)}).")
            if self.sink_refuses:
                lines.append(self.refusal())
        if self.rewrites:
            lines.append("To get inserts only:")
            lines += [f"  - {rewrite}" for rewrite in self.rewrites]
        return lines

    def __str__(self) -> str:
        return "\n".join(["Why does this query retract?", *self.lines()])


def _sink(root: ExecNode) -> SinkRequirement:
    physical = root.physical
    if isinstance(physical, ph.Sink):
        connector = physical.connector
        name = f"table {physical.table.split('.')[-1].strip('`')!r} ({connector or 'no connector'})"
    else:
        connector, name = "collect", "the query's collected result (print(), collect(), the cell's view)"
    modes = physical.accepts if isinstance(physical, ph.Sink) else ("I", "UB", "UA", "D")
    wording = _SINK_WORDING.get(modes, "takes " + ", ".join(KINDS[m] for m in modes))
    table = physical.table if isinstance(physical, ph.Sink) else ""
    return SinkRequirement(connector, name, table, tuple(KINDS[m] for m in modes), wording)


def _kinds(modes: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(KINDS[m] for m in ("I", "UB", "UA", "D") if m in modes)


def _changes(modes: tuple[str, ...]) -> bool:
    return any(m in modes for m in _CHANGES)


def _time_attributes(node: ph.PhysicalNode) -> list[str]:
    """The time attribute columns the node's input rows carry."""
    return [f.name for child in node.inputs for f in child.fields if f.type.time_attribute]


def _source_table(node: ph.PhysicalNode) -> str:
    """The name of the first table the node reads (``t`` when it reads none, e.g. VALUES)."""
    if isinstance(node, ph.TableSourceScan):
        return node.path[-1]
    for child in node.inputs:
        table = _source_table(child)
        if table != "t":
            return table
    return "t"


def _updates_by_itself(node: ph.PhysicalNode) -> bool:
    """Whether the node emits updates or deletes even when its input is insert-only."""
    if isinstance(node, ph.Rank):
        return not node.keeps_first_row
    if isinstance(node, ph.Join):
        return node.join_type != "inner"
    return isinstance(node, ph.GroupAggregate | ph.SortLimit)


def _reason_and_rewrites(node: ph.PhysicalNode) -> tuple[str, list[str]]:
    """Why ``node`` makes updates from insert-only input, and the rewrites that avoid them."""
    times = _time_attributes(node)
    time = times[0] if times else "ts"
    table = _source_table(node)
    window_source = f"TABLE(TUMBLE(TABLE {table}, DESCRIPTOR({time}), INTERVAL '1' MINUTE))"
    if not times:
        window_source += (
            f" ({table} has no time attribute yet: declare one, a rowtime column with a WATERMARK or "
            f"`{time} AS PROCTIME()`)"
        )
    if isinstance(node, ph.GroupAggregate):
        keys = ", ".join(node.inputs[0].names[g] for g in node.grouping)
        reason = (
            "A regular GROUP BY emits a group's row when its first row arrives, then retracts it (-U) and emits "
            "the new value (+U) each time another row of the group arrives: on an unbounded input no group's "
            "value is ever final."
        )
        rewrites = [
            f"Aggregate per window instead: SELECT window_start, window_end, {keys + ', ' if keys else ''}COUNT(*) "
            f"FROM {window_source} GROUP BY window_start, window_end{', ' + keys if keys else ''}. A window "
            "aggregate (WindowAggregate) emits each window's row once, when the watermark passes the window's "
            "end: inserts only.",
        ]
        if keys:
            rewrites.append(
                "Or keep the updates and write them to a sink that takes them: print, blackhole, or in Flink an "
                f"upsert table with PRIMARY KEY ({keys}) NOT ENFORCED (one row per group, +U without -U)."
            )
        return reason, rewrites
    if isinstance(node, ph.Rank):
        if node.deduplicate is not None:
            reason = (
                "Deduplication keeping the last row (ORDER BY the time attribute DESC) emits a key's row, then "
                "retracts it (-U) and emits the newer one (+U) whenever a later row of the key arrives."
            )
            return reason, [
                "Keep the first row instead (ORDER BY the time attribute ASC): Deduplicate keep=[FirstRow] never "
                "changes what it emitted, so it emits inserts only.",
                f"Or deduplicate per window (ROW_NUMBER() OVER (PARTITION BY window_start, window_end, key ORDER BY "
                f"{time} DESC) = 1 over {window_source}): one row per key and window, "
                "emitted once.",
            ]
        reason = (
            "A Top-N (ROW_NUMBER() ... <= N) emits a row when it enters the top N and deletes or updates it when a "
            "better row pushes it out or moves it: the ranking of an unbounded input is never final."
        )
        return reason, [
            f"Rank per window (Window Top-N): ROW_NUMBER() OVER (PARTITION BY window_start, window_end ...) over "
            f"{window_source} emits each window's top N once, when the watermark passes its end: inserts only.",
            "With N = 1 ordered by a time attribute ascending, the Top-N is a deduplication keeping the first row, "
            "which emits inserts only.",
        ]
    if isinstance(node, ph.Join):
        if node.join_type != "inner":
            reason = (
                f"A regular {node.join_type.upper()} OUTER JOIN emits a row without a match padded with NULLs at "
                "once, and deletes it (-D) when a matching row arrives later, to emit the joined row."
            )
        else:
            reason = "A regular join over updating inputs updates the joined rows as its inputs change."
        return reason, [
            "Bound the join in time (an interval join: a.ts BETWEEN b.ts - INTERVAL '5' MINUTE AND b.ts, on time "
            "attributes): it emits a NULL-padded row only once the watermark passes the interval, so it never "
            "retracts (IntervalJoin).",
            "Or join per window (a window join over two window table functions), or join a versioned table as of "
            "each row's time (FOR SYSTEM_TIME AS OF): both emit inserts only.",
        ]
    if isinstance(node, ph.SortLimit):
        reason = (
            "ORDER BY ... LIMIT over an unbounded input keeps a changing top N: rows are deleted (-D) or updated as "
            "better rows arrive."
        )
        return reason, [
            f"Rank per window (Window Top-N over {window_source}) to emit each window's top N once, or run the "
            "query in batch mode (SET 'execution.runtime-mode' = 'batch') for the final top N.",
        ]
    return f"{node.name(True)} emits updates or deletes.", []


def explain_retraction(root: ExecNode, *, streaming: bool) -> Retraction:
    """Why the statement whose ExecNode graph ends at ``root`` (its sink, the collect sink of a
    query, or a query without its sink) retracts, from the changelog modes the planner derived."""
    sink = _sink(root)
    query = root.inputs[0] if isinstance(root.physical, ph.Sink) or root.physical is None else root
    if not streaming or query.physical is None:
        return Retraction(streaming, ("+I",), (), (), (), sink, "", ())
    # The modes with -U where the sink asks for it (a query's plan is inferred without its collect
    # sink, which takes -U), worked out on a copy: the planner's plan stays as EXPLAIN printed it.
    memo: dict[int, object] = {}
    physical = copy.deepcopy(query.physical, memo)
    changelog.require_update_before(physical, "-U" in sink.accepts)

    def modes(node: ExecNode) -> tuple[str, ...]:
        copied = memo.get(id(node.physical))
        return copied.changelog if isinstance(copied, ph.PhysicalNode) else ()

    origins: list[RetractionOrigin] = []
    later: list[RetractionOrigin] = []
    carried: list[str] = []
    rewrites: list[str] = []
    for node in nodes(query):
        if node.physical is None or not _changes(modes(node)):
            continue
        updating_input = any(_changes(modes(child)) for child in node.inputs)
        if updating_input and not _updates_by_itself(node.physical):
            # It forwards the updates it is given.
            carried.append(f"{node.name}[{node.id}]")
            continue
        reason, advice = _reason_and_rewrites(node.physical)
        origin = RetractionOrigin(node.id, node.name, node.description, _kinds(modes(node)), reason)
        (later if updating_input else origins).append(origin)
        rewrites += [rewrite for rewrite in advice if rewrite not in rewrites]
    result = _kinds(modes(query))
    described = changelog.describe(query.physical)
    return Retraction(streaming, result, tuple(origins), tuple(later), tuple(carried), sink, described, tuple(rewrites))
