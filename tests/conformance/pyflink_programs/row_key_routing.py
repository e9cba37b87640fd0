# Recorded with PyFlink 2.3.0: python row_key_routing.py P (P = 2, 3, 4); what it printed is
# ../pyflink_row_key_routing.json. Keys holding Rows and RowKinds, without key_type.
import sys

from pyflink.common import Row, RowKind, Types
from pyflink.datastream import StreamExecutionEnvironment


def kinded(row, kind):
    row.set_row_kind(kind)
    return row


Person = Row("name", "age")
KEYS = (
    [Row(i) for i in range(40)]
    + [Row(f"k{i}", i) for i in range(40)]
    + [Row(name=f"n{i}", id=i) for i in range(40)]
    + [Person(f"p{i}", i) for i in range(20)]
    + [Row(Row(i), f"x{i}") for i in range(20)]
    + [Row(outer=Row(inner=i, none=None), tag="t") for i in range(20)]
    + [(f"t{i}", Row(i)) for i in range(20)]
    + [(Row(i), Row(name=str(i))) for i in range(20)]
    + [((i, Row(i, (i, "z"))), "deep") for i in range(10)]
    + [kinded(Row(i, "kind"), kind) for kind in RowKind for i in range(10)]
    + [(kinded(Row(name=f"u{i}"), RowKind.UPDATE_AFTER), i) for i in range(10)]
    + list(RowKind)
    + [(kind, "by kind") for kind in RowKind]
    + [Row(2.5, "f"), Row(True, "b"), Row(None, "n"), Row(b"bytes", "y"), Row(), Row(x=None), Row("é日本", -1)]
)

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(int(sys.argv[1]))
(
    env.from_collection(list(range(len(KEYS))), type_info=Types.INT())
    .key_by(lambda i: KEYS[i])
    .map(lambda i: f"key {i} {KEYS[i]!r}", output_type=Types.STRING())
    .print()
)
# Rows as a typed source hands them on: named (ROW_NAMED) and f0, f1, ... (ROW).
pairs = [(f"r{i}", i) for i in range(30)]
(
    env.from_collection(pairs, type_info=Types.ROW_NAMED(["name", "n"], [Types.STRING(), Types.INT()]))
    .key_by(lambda row: row)
    .map(lambda row: f"named {row!r}", output_type=Types.STRING())
    .print()
)
(
    env.from_collection(pairs, type_info=Types.ROW([Types.STRING(), Types.INT()]))
    .key_by(lambda row: row)
    .map(lambda row: f"positional {row!r}", output_type=Types.STRING())
    .print()
)
(
    env.from_collection(pairs, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    .key_by(lambda pair: Row(word=pair[0]))
    .map(lambda pair: f"built {pair!r}", output_type=Types.STRING())
    .print()
)
env.execute()
