# rescale() on a re-keyed stream (key_by after a keyed sum) is rejected.
env.set_parallelism(2)
env.from_sequence(1, 10).key_by(lambda x: x % 2).sum(0).key_by(lambda x: x).rescale().print()
