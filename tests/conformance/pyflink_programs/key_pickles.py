# Keys holding PyFlink's own objects. Recorded with PyFlink 2.3.0 (python key_pickles.py):
# the bytes cloudpickle pickles each key to, as key_by without key_type does, are
# ../pyflink_key_pickles.json.
from datetime import date, datetime
from decimal import Decimal

from pyflink.common import Row, RowKind
from pyflink.datastream.window import CountWindow, GlobalWindow, TimeWindow


def kinded(row, kind):
    row.set_row_kind(kind)
    return row


def shared_fields():
    # One Row object twice in a key, and one string object in two fields.
    row, word = Row(name="twice"), "".join(["sha", "red"])
    return (row, row, Row(word, word))


Person = Row("name", "age")
KEYS = [
    Row(1),
    Row("a", 1),
    Row(name="Alice", age=11),
    Person("Bob", 12),
    Row(),
    Row(x=None),
    Row(None, 2.5, True, b"bytes", "é日本", -(2**70)),
    Row(Row(1, 2), Row(name="n")),
    Row(outer=Row(inner=Row(deep=1)), tag="t"),
    ("t", Row(1)),
    (Row(1), Row(name="1"), Row(1)),
    ((1, Row(1, (1, "z"))), "deep"),
    kinded(Row(1, "kind"), RowKind.UPDATE_BEFORE),
    kinded(Row(name="u"), RowKind.UPDATE_AFTER),
    kinded(Row(Row(1), kinded(Row(2), RowKind.DELETE)), RowKind.DELETE),
    (kinded(Row(1), RowKind.DELETE), kinded(Row(2), RowKind.DELETE), Row(3)),
    RowKind.INSERT,
    RowKind.UPDATE_BEFORE,
    (RowKind.UPDATE_AFTER, RowKind.DELETE, RowKind.UPDATE_AFTER),
    shared_fields(),
    Row("x" * 70000, 1),
    (Row(name="y" * 300), [Row(1)], {"k": Row(2)}, frozenset([Row(3)])),
    Row(date(2024, 1, 2), datetime(2024, 1, 2, 3, 4, 5), Decimal("1.50")),
    TimeWindow(0, 5000),
    (TimeWindow(-1000, 1000), "w"),
    CountWindow(3),
    GlobalWindow(),
]

if __name__ == "__main__":
    import json

    import cloudpickle

    print(
        json.dumps({"rows": [[repr(key), cloudpickle.dumps(key).hex()] for key in KEYS]}, indent=1, ensure_ascii=False)
    )
