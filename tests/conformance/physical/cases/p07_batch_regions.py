# BATCH: every exchange is blocking, so each subtask is its own pipelined region and runs when its
# inputs are done, in whatever slot is free: the job needs one slot.
env.set_parallelism(3)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
(env.from_sequence(1, 100).set_parallelism(2)
    .map(lambda x: x).set_parallelism(3)
    .key_by(lambda x: x % 5).reduce(lambda a, b: a + b).set_parallelism(3)
    .rebalance().map(lambda x: x).set_parallelism(2)
    .print().set_parallelism(2))
