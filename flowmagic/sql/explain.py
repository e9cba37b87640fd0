"""The text of ``EXPLAIN``: Abstract Syntax Tree, Optimized Physical Plan, Optimized Execution Plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flowmagic.sql import tree
from flowmagic.sql.exec_nodes import ExecNode, render
from flowmagic.sql.logical import RelNode
from flowmagic.sql.optimize import optimize
from flowmagic.sql.physical import PhysicalNode

if TYPE_CHECKING:
    from flowmagic.sql.session import SqlSession


def ast_text(logical: RelNode) -> str:
    return tree.render(logical, lambda n: tree.call(n.kind, n.terms()), lambda n: n.inputs)


def explain_text(
    session: SqlSession,
    logical: RelNode,
    details: tuple[str, ...] = (),
    planned: tuple[PhysicalNode, ExecNode] | None = None,
) -> str:
    """The three plans of ``logical``, with the changelog modes when ``CHANGELOG_MODE`` is asked;
    ``planned``: its physical plan and ExecNode graph, when already made."""
    physical = optimize(logical, session.streaming, session.configuration) if planned is None else planned[0]
    changelog = "CHANGELOG_MODE" in details and session.streaming
    physical_text = tree.render(
        physical, lambda n: tree.call(n.name(False), n.physical_terms(session.streaming, changelog)), lambda n: n.inputs
    )
    exec_text = render(session.exec_graph(physical) if planned is None else planned[1])
    return (
        f"== Abstract Syntax Tree ==\n{ast_text(logical)}\n\n"
        f"== Optimized Physical Plan ==\n{physical_text}\n\n"
        f"== Optimized Execution Plan ==\n{exec_text}\n"
    )
