"""The live result of a SQL query in its cell (``%flow run NAME`` on a ``%%flow NAME --sql``
cell): the materialized **table** (rows updated in place) or the **changelog** (an ``op``
column, rows coloured by kind), with a switch between the two, redrawn while the job runs;
at the end (or on cancel) the SQL client's tableau text under it, selectable.

Displayed, it makes two outputs, as the graph widget does: first a static one, then the
widget. The static output holds the final tableau text once the job ended (``text/plain``
and a ``<pre>``), which is what saved notebooks, their exports and nbval see; while the
widget is drawn, a style rule in it hides the static output of its own output area.

Redrawing is throttled (:data:`REDRAW`), and only the newest rows are drawn (the model,
:class:`~flowmagic.widgets.changelog_table.ChangelogTable`, keeps the newest changes and
counts all), so that a fast or large result keeps the notebook responsive.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets

from flowmagic.render import printable
from flowmagic.widgets.changelog_table import KINDS, ChangelogTable

__all__ = ["HIGHLIGHTED", "REDRAW", "SHOWN", "SqlResultView", "cell_texts"]

#: Seconds between redraws while rows arrive.
REDRAW = 0.5
#: How many rows the table and the changelog draw (the newest).
SHOWN = 200
#: The table marks the rows the newest this many changes touched.
HIGHLIGHTED = 10
_VIEWS = ("Table", "Changelog")
_NO_MATH = "tex2jax_ignore mathjax_ignore"

# Row colours by kind: inserts green, the old row of an update and deletes red, the new row blue.
_STYLE = """<style>
.jp-OutputArea:has(.flowmagic-sqlresult) > .jp-OutputArea-child:has(.flowmagic-sqlresult-static) { display: none; }
.flowmagic-sqlresult-view { font-size: var(--jp-ui-font-size1, 13px); }
.flowmagic-sqlresult-view .progress { font-weight: 600; margin: 4px 0; }
.flowmagic-sqlresult-view .note { color: var(--jp-ui-font-color2, #4b5563); margin: 2px 0; }
.flowmagic-sqlresult-view table { border-collapse: collapse; margin: 4px 0; }
.flowmagic-sqlresult-view th, .flowmagic-sqlresult-view td {
  padding: 1px 10px 1px 4px; text-align: left; white-space: nowrap; font-family: var(--jp-code-font-family, monospace);
}
.flowmagic-sqlresult-view th { border-bottom: 1px solid var(--jp-border-color1, #9ca3af); }
.flowmagic-sqlresult-view tr.kind-I td { background: rgba(34, 197, 94, 0.14); }
.flowmagic-sqlresult-view tr.kind-UB td, .flowmagic-sqlresult-view tr.kind-D td { background: rgba(239, 68, 68, 0.14); }
.flowmagic-sqlresult-view tr.kind-UA td { background: rgba(59, 130, 246, 0.14); }
.flowmagic-sqlresult-view tr.changed td { background: rgba(59, 130, 246, 0.10); }
.flowmagic-sqlresult-tableau pre { user-select: text; overflow-x: auto; margin: 4px 0; }
.flowmagic-sqlresult-view details.why summary { cursor: pointer; margin: 2px 0; }
</style>"""
_KIND_CLASS = {"+I": "kind-I", "-U": "kind-UB", "+U": "kind-UA", "-D": "kind-D"}


def cell_texts(values: Sequence[object]) -> list[str]:
    """A row's fields as the SQL client prints them when no type says otherwise."""
    return [
        "<NULL>" if value is None else ("TRUE" if value else "FALSE") if isinstance(value, bool) else str(value)
        for value in values
    ]


class SqlResultView:
    """The result of one run of a SQL query, fed row by row (:meth:`add`) and ended with the
    tableau text (:meth:`finish`).

    ``key``: the positions of the upsert key fields (the table updates rows by it), None for
    the whole row. ``text``: how a row's fields print (default: :func:`cell_texts`; a query's
    view prints them as the SQL client does, by their types). ``why``: why the query retracts,
    as a one-line summary and its HTML, shown folded next to the result.
    """

    def __init__(
        self,
        name: str,
        columns: Sequence[str],
        key: Sequence[int] | None = None,
        *,
        shown: int = SHOWN,
        keep: int = 1000,
        text: Callable[[Sequence[object]], list[str]] = cell_texts,
        why: tuple[str, str] | None = None,
    ):
        self.name = name
        self.table = ChangelogTable(columns, key, keep=max(keep, shown))
        self.shown = shown
        self.text = text
        self.why = why
        self.state = "RUNNING"
        #: The SQL client's tableau text, once the job ended.
        self.tableau: str | None = None
        self._lock = threading.Lock()
        self._drawn_at = 0.0
        self._static: Any = None
        self._status = ipywidgets.HTML()
        self._switch = ipywidgets.ToggleButtons(
            options=list(_VIEWS),
            value="Table",
            style={"button_width": "auto"},
            tooltips=[
                "The materialized result: each row as it stands now, updated in place",
                "Every row received with its kind (op): +I insert, -U/+U a row's old and new value, -D delete",
            ],
        )
        self._rows = ipywidgets.HTML()
        self._final = ipywidgets.HTML()
        self._switch.observe(lambda change: self.redraw(), names="value")
        # Drawn once: a redraw would fold it again under the reader's eyes.
        self._why = ipywidgets.HTML(f'<div class="flowmagic-sqlresult-view {_NO_MATH}">{self.why_html()}</div>')
        self.widget = ipywidgets.VBox([self._status, self._why, self._switch, self._rows, self._final])
        self.widget.add_class("flowmagic-sqlresult")
        self.redraw()

    # -- feeding -------------------------------------------------------------------------

    def add(self, kind: str, values: Sequence[object]) -> None:
        """One row of the result with its kind; redraws at most every :data:`REDRAW` seconds."""
        self.add_all([(kind, values)])

    def add_all(self, rows: Iterable[tuple[str, Sequence[object]]]) -> None:
        """Rows of the result, each with its kind; redraws at most every :data:`REDRAW` seconds."""
        with self._lock:
            apply = self.table.apply
            for kind, values in rows:
                apply(kind, values)
        now = time.monotonic()
        if now - self._drawn_at >= REDRAW:
            self.redraw(now)

    def finish(self, state: str, tableau: str | None) -> None:
        """The job ended in ``state`` (``FINISHED``, ``CANCELED``, ``FAILED``); ``tableau`` is
        the SQL client's text of the result, shown selectable and kept in the saved notebook."""
        self.state = state
        self.tableau = tableau
        self.redraw()
        if self._static is not None:
            self._static.update(self.static_bundle(), raw=True)

    @property
    def view(self) -> str:
        """``Table`` or ``Changelog``: what the switch shows."""
        return str(self._switch.value)

    @view.setter
    def view(self, value: str) -> None:
        self._switch.value = value

    # -- drawing -------------------------------------------------------------------------

    def redraw(self, now: float | None = None) -> None:
        """Draw the status line and the rows of the view the switch shows."""
        with self._lock:
            self._drawn_at = time.monotonic() if now is None else now
            self._status.value = f'{_STYLE}<div class="flowmagic-sqlresult-view {_NO_MATH}">{self.status_html()}</div>'
            rows = self.table_html() if self.view == "Table" else self.changelog_html()
            self._rows.value = f'<div class="flowmagic-sqlresult-view {_NO_MATH}">{rows}</div>'
            if self.tableau is not None:
                self._final.value = (
                    f'<div class="flowmagic-sqlresult-view flowmagic-sqlresult-tableau {_NO_MATH}">'
                    f'<div class="note">The SQL client\'s text of the result:</div>'
                    f"<pre>{html.escape(printable(self.tableau))}</pre></div>"
                )

    def summary(self) -> str:
        """One line: the state, the rows received by kind and the table's size."""
        table = self.table
        kinds = ", ".join(f"{table.totals[kind]:,} {kind}" for kind in KINDS if table.totals[kind])
        line = f"{self.state} · {table.received:,} rows received" + (f" ({kinds})" if kinds else "")
        line += f" · the table has {len(table):,} row{'' if len(table) == 1 else 's'}"
        if table.evicted:
            line += f" ({table.evicted:,} oldest evicted)"
        return line

    def status_html(self) -> str:
        return f'<div class="progress">{html.escape(self.name)}: {html.escape(self.summary())}</div>'

    def why_html(self) -> str:
        """Why the query retracts, folded under its summary line (nothing when not given)."""
        if self.why is None:
            return ""
        summary, page = self.why
        return f"<details class='why'><summary>{html.escape(summary)}</summary>{page}</details>"

    def _header(self, op: bool) -> str:
        cells = (["op"] if op else []) + list(self.table.columns)
        return "<tr>" + "".join(f"<th>{html.escape(printable(c))}</th>" for c in cells) + "</tr>"

    def _cells(self, values: Sequence[object]) -> str:
        return "".join(f"<td>{html.escape(printable(cell))}</td>" for cell in self.text(values))

    def table_html(self) -> str:
        """The table's most recently changed rows (all when they are few), in table order;
        those the newest :data:`HIGHLIGHTED` changes touched stand out."""
        table = self.table
        rows = table.recent_rows(self.shown)
        recent = max(table.received - HIGHLIGHTED, 0)
        body = "".join(
            f"<tr{' class=changed' if number > recent else ''}>{self._cells(row)}</tr>" for number, row in rows
        )
        note = ""
        if len(table) > len(rows):
            note = f'<div class="note">The {len(rows):,} most recently changed of {len(table):,} rows.</div>'
        return f"{note}<table class='result-table'>{self._header(False)}{body}</table>"

    def changelog_html(self) -> str:
        """The newest rows received, each with its kind, coloured by it."""
        table = self.table
        changes = list(table.changes)[-self.shown :]
        body = "".join(
            f"<tr class='{_KIND_CLASS[change.kind]}'><td>{change.kind}</td>{self._cells(change.values)}</tr>"
            for change in changes
        )
        note = ""
        if table.received > len(changes):
            note = f'<div class="note">The newest {len(changes):,} of {table.received:,} rows received.</div>'
        return f"{note}<table class='result-changelog'>{self._header(True)}{body}</table>"

    # -- display -------------------------------------------------------------------------

    def static_bundle(self) -> dict[str, str]:
        """What saved notebooks and exports keep: the tableau text once the job ended."""
        if self.tableau is None:
            text = f"<SQL result of {self.name!r}: {self.summary()}>"
            page = f"<p>{html.escape(text)}</p>"
        else:
            text = self.tableau
            page = f"<pre>{html.escape(printable(self.tableau))}</pre>"
        return {
            "text/html": f'<div class="flowmagic-sqlresult-static {_NO_MATH}">{self.why_html()}{page}</div>',
            "text/plain": text,
        }

    def display(self) -> None:
        """Show the static output, then the widget, in the current cell."""
        from IPython.display import display

        self._static = display(self.static_bundle(), raw=True, display_id=True)
        # No text fallback: where the widget cannot be drawn, the static output stands for it.
        display({**self.widget._repr_mimebundle_(), "text/plain": ""}, raw=True)
