# ProcessFunction routing: even numbers to the main output, odd numbers to a side output.
env.set_parallelism(1)
odd = OutputTag("odd")


class Route(ProcessFunction):
    def process_element(self, value, ctx, out):
        if value % 2 == 0:
            out.collect(("even", value))
        else:
            ctx.output(odd, ("odd", value))


main = env.from_sequence(1, 10).process(Route())
result = main.union(main.get_side_output(odd))
