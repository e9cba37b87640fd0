# Records of a typed source reach Python functions as PyFlink decodes them: every string field
# a string of its own, even where the collection held one string object twice. A whole record
# used as an untyped key pickles so (no back-reference), which decides its subtask. Run on
# PyFlink 2.3.0 with "pyflink" for "flowmagic" in its imports, it printed typed_source_keys.txt.
from flowmagic.common import Types
from flowmagic.datastream import StreamExecutionEnvironment

words = ["key%d" % n for n in range(30)]
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(3)
pairs = env.from_collection([(w, w) for w in words], type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
pairs.key_by(lambda pair: pair).map(lambda pair: pair[0]).print()
env.execute()
