import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.ResourceManagerOptions;
import org.apache.flink.runtime.jobgraph.JobEdge;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobmanager.scheduler.SlotSharingGroup;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.time.Duration;
import java.util.*;

/**
 * The Java twins of the physical-graph cases (tests/conformance/physical/cases/*.py): each
 * program's JobGraph, as Flink's StreamingJobGraphGenerator built it, written as a spec for
 * PhysicalRecorder. "Programs seed-local" runs the seed's example on a local environment as
 * Flink's own (PerJobMiniClusterFactory sizes its one TaskManager by the job's max parallelism).
 */
public class Programs {
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    static StreamExecutionEnvironment env(int parallelism) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        return env;
    }

    static MapFunction<Long, Long> id() { return x -> x; }

    static StreamExecutionEnvironment p01() {
        StreamExecutionEnvironment env = env(4);
        env.fromSequence(1, 100).setParallelism(2)
                .rescale().map(id()).setParallelism(4)
                .rescale().map(id()).setParallelism(2)
                .rescale().map(id()).setParallelism(6)
                .print().setParallelism(6);
        return env;
    }

    static StreamExecutionEnvironment p02() {
        StreamExecutionEnvironment env = env(3);
        env.fromSequence(1, 100).setParallelism(1)
                .keyBy((KeySelector<Long, Long>) x -> x % 3).map(id()).setParallelism(3).slotSharingGroup("a")
                .rebalance().map(id()).setParallelism(5).slotSharingGroup("b")
                .shuffle().map(id()).setParallelism(2)
                .print().setParallelism(2).slotSharingGroup("default");
        return env;
    }

    static StreamExecutionEnvironment p03() {
        StreamExecutionEnvironment env = env(3);
        env.fromSequence(1, 100)
                .map(id())
                .map(id()).disableChaining()
                .filter(x -> x > 1)
                .print();
        return env;
    }

    static StreamExecutionEnvironment p04() {
        StreamExecutionEnvironment env = env(2);
        DataStream<Long> first = env.fromSequence(1, 10);
        DataStream<Long> second = env.fromSequence(1, 10).setParallelism(1).slotSharingGroup("side");
        first.union(second).map(id()).setParallelism(4).slotSharingGroup("u")
                .broadcast().map(id()).setParallelism(3)
                .print();
        return env;
    }

    static StreamExecutionEnvironment p05() {
        StreamExecutionEnvironment env = env(4);
        env.fromData("to be or not to be", "that is the question").setParallelism(1)
                .flatMap((FlatMapFunction<String, Tuple2<String, Integer>>) (line, out) -> {
                    for (String word : line.split(" ")) {
                        out.collect(Tuple2.of(word, 1));
                    }
                }).returns(Types.TUPLE(Types.STRING, Types.INT)).setParallelism(4).slotSharingGroup("flatmap_sg")
                .keyBy((KeySelector<Tuple2<String, Integer>, String>) t -> t.f0)
                .sum(1).setParallelism(3).slotSharingGroup("sum_sg")
                .print();
        return env;
    }

    static StreamExecutionEnvironment p06() {
        StreamExecutionEnvironment env = env(2);
        env.fromSequence(1, 100).setParallelism(3)
                .rescale().map(id()).setParallelism(6).slotSharingGroup("wide")
                .rescale().map(id()).setParallelism(2).slotSharingGroup("default")
                .rebalance().map(id()).setParallelism(4).slotSharingGroup("wide")
                .print().setParallelism(4);
        return env;
    }

    static StreamExecutionEnvironment p07() {
        StreamExecutionEnvironment env = env(3);
        env.setRuntimeMode(org.apache.flink.api.common.RuntimeExecutionMode.BATCH);
        env.fromSequence(1, 100).setParallelism(2)
                .map(id()).setParallelism(3)
                .keyBy((KeySelector<Long, Long>) x -> x % 5).reduce((a, b) -> a + b).setParallelism(3)
                .rebalance().map(id()).setParallelism(2)
                .print().setParallelism(2);
        return env;
    }

    static Map<String, Object> spec(String name, StreamExecutionEnvironment env) {
        JobGraph graph = env.getStreamGraph().getJobGraph();
        Map<SlotSharingGroup, Integer> groupIndex = new LinkedHashMap<>();
        List<Object> vertices = new ArrayList<>();
        for (JobVertex vertex : graph.getVerticesSortedTopologicallyFromSources()) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("id", vertex.getID().toString());
            v.put("name", vertex.getName());
            v.put("parallelism", vertex.getParallelism());
            v.put("max_parallelism", vertex.getMaxParallelism());
            v.put("slot_sharing_group", vertex.getSlotSharingGroup().getSlotSharingGroupName());
            v.put("slot_sharing_group_index", groupIndex.computeIfAbsent(vertex.getSlotSharingGroup(), g -> groupIndex.size()));
            List<Object> inputs = new ArrayList<>();
            for (JobEdge edge : vertex.getInputs()) {
                Map<String, Object> in = new LinkedHashMap<>();
                in.put("source_vertex", edge.getSource().getProducer().getID().toString());
                in.put("ship_strategy", edge.getShipStrategyName());
                in.put("distribution_pattern", edge.getDistributionPattern().name());
                in.put("result_partition_type", edge.getSource().getResultType().name());
                inputs.add(in);
            }
            v.put("inputs", inputs);
            vertices.add(v);
        }
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("case", name);
        spec.put("name", name);
        spec.put("job_type", graph.getJobType().name());
        spec.put("vertices", vertices);
        return spec;
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("seed-local")) {
            Configuration config = new Configuration();
            config.set(JobManagerOptions.SLOT_REQUEST_TIMEOUT, Duration.ofSeconds(8));
            config.set(ResourceManagerOptions.STANDALONE_CLUSTER_STARTUP_PERIOD_TIME, Duration.ofSeconds(4));
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(config);
            env.setParallelism(4);
            env.fromData("to be or not to be", "that is the question").setParallelism(1)
                    .flatMap((FlatMapFunction<String, Tuple2<String, Integer>>) (line, out) -> {
                        for (String word : line.split(" ")) {
                            out.collect(Tuple2.of(word, 1));
                        }
                    }).returns(Types.TUPLE(Types.STRING, Types.INT)).setParallelism(4).slotSharingGroup("flatmap_sg")
                    .keyBy((KeySelector<Tuple2<String, Integer>, String>) t -> t.f0)
                    .sum(1).setParallelism(3).slotSharingGroup("sum_sg")
                    .print();
            try {
                env.execute("seed");
                System.out.println("FINISHED");
            } catch (Exception e) {
                for (Throwable c = e; c != null; c = c.getCause()) {
                    System.out.println(c.getClass().getName() + ": " + c.getMessage());
                }
            }
            System.exit(0);
        }
        File dir = new File(args[0]);
        Map<String, StreamExecutionEnvironment> programs = new LinkedHashMap<>();
        programs.put("p01_pointwise_mix", p01());
        programs.put("p02_groups_all_to_all", p02());
        programs.put("p03_disable_chaining", p03());
        programs.put("p04_union_broadcast_groups", p04());
        programs.put("p05_seed_slot_sharing", p05());
        programs.put("p06_group_revisited", p06());
        programs.put("p07_batch_regions", p07());
        for (Map.Entry<String, StreamExecutionEnvironment> e : programs.entrySet()) {
            JSON.writeValue(new File(dir, e.getKey() + ".json"), spec(e.getKey(), e.getValue()));
        }
        System.exit(0);
    }
}
