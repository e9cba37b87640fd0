"""Records of a declared Row or Tuple type, as PyFlink hands them on.

An operator declared ``output_type=Types.ROW_NAMED([...], [...])`` (or ``Types.ROW``) passes
Rows on with the type's field names, whatever names (or none) the function gave them; one
declared ``Types.TUPLE([...])`` passes tuples. PyFlink fails the job when such an operator
emits anything else (a tuple for a Row type: ``'tuple' object has no attribute
'get_fields_by_names'``; a list or a Row for a Tuple type: ``Expected tuple, got list``);
so does flowmagic, naming the operator and the record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmagic.runtime.operators.operator import Operator
from flowmagic.vocabulary.types import Row, TypeInformation, is_tuple_type, named_row

__all__ = ["typed_output"]


def typed_output(type_info: TypeInformation, operator: Operator) -> Callable[[Any], Any] | None:
    """What ``operator``'s records go through for its declared ``type_info`` (None: nothing)."""
    names = type_info.field_names
    arity = len(type_info.fields)
    if names is not None:

        def as_row(value: Any) -> Any:
            if not isinstance(value, Row):
                said = (
                    f"PyFlink fails here with: '{type(value).__name__}' object has no attribute 'get_fields_by_names'"
                )
                raise operator.fail(_mismatch(type_info, value, "a Row", said), value)
            if len(value) != arity:
                raise operator.fail(_mismatch(type_info, value, "a Row", f"it has {len(value)}"), value)
            return named_row(value, names)

        return as_row
    if is_tuple_type(type_info):

        def as_tuple(value: Any) -> Any:
            if isinstance(value, Row) or not isinstance(value, tuple) or len(value) != arity:
                said = f"PyFlink fails here with: Expected tuple, got {type(value).__name__}"
                if isinstance(value, tuple) and not isinstance(value, Row):
                    said = f"it has {len(value)}"
                raise operator.fail(_mismatch(type_info, value, "a tuple", said), value)
            return value

        return as_tuple
    return None


def _mismatch(type_info: TypeInformation, value: Any, wanted: str, why: str) -> TypeError:
    return TypeError(
        f"the operator declares output_type {type_info} and emitted {type(value).__name__} {value!r}: emit "
        f"{wanted} of {len(type_info.fields)} fields ({why})"
    )
