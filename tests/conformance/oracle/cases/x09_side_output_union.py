# A side output unioned back with its main stream: two edges Process->Map (one tagged), no chaining.
env.set_parallelism(2)
side = OutputTag("side")
def route(value, ctx, out):
    if value % 2:
        ctx.output(side, value)
    else:
        out.collect(value)
main = env.from_sequence(1, 20).process(route)
main.union(main.get_side_output(side)).map(lambda x: x * 10).print()
