# Rolling max(1) (only field 1 changes, other fields from the key's first record) versus
# max_by(1) (the whole record holding the maximum; the first one on ties).
env.set_parallelism(1)
data = [("a", 3, "p"), ("b", 4, "u"), ("a", 5, "q"), ("b", 4, "v"), ("a", 5, "r"), ("b", 1, "w"), ("a", 2, "s"), ("a", 7, "t")]
s = env.from_collection(data).key_by(lambda t: t[0])
result = (s.max(1).map(lambda t: ("max", t[0], t[1], t[2]))
          .union(s.max_by(1).map(lambda t: ("max_by", t[0], t[1], t[2]))))
