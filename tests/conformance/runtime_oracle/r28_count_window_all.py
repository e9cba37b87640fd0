# count_window_all(3): non-keyed tumbling count windows; a trailing partial window never fires.
env.set_parallelism(1)
result = (env.from_sequence(1, 10)
          .map(lambda x: (x, 1))
          .count_window_all(3)
          .reduce(lambda a, b: (a[0] + b[0], a[1] + b[1])))
