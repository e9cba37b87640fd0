# connect + Co-Map: each input has its own map function; outputs tagged by input.
env.set_parallelism(1)
left = env.from_collection([1, 2, 3])
right = env.from_collection(["x", "yy", "zzz", "w"])
result = left.connect(right).map(lambda x: ("left", x * 10), lambda s: ("right", len(s)))
