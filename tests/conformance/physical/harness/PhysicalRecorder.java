import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.ResourceManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.ResultPartition;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.runtime.jobgraph.DistributionPattern;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobType;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.jobgraph.tasks.AbstractInvokable;
import org.apache.flink.runtime.jobmanager.scheduler.SlotSharingGroup;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.flink.util.StringUtils;

import java.io.File;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs a JobGraph description (vertices, parallelism, slot sharing groups, inputs: what Flink's
 * StreamingJobGraphGenerator built for a program) on a MiniCluster of N TaskManagers with M
 * slots each, every vertex's invokable replaced by {@link Recorder}, which writes down from inside
 * the running Task: its slot (allocation id), its ResultPartitions (subpartition counts) and its
 * InputGates (each InputChannel's class: local, remote or unknown, and the partition it reads).
 * The ArchivedExecutionGraph adds the TaskManager each attempt ran on.
 *
 * Usage: PhysicalRecorder OUT.json RUNS TMxSLOTS[,TMxSLOTS...] SPEC.json...
 * (TMxSLOTS "local" = a local environment's cluster: 1 TM, slots = the job's max parallelism.)
 */
public class PhysicalRecorder {
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    static final Map<String, Map<String, Object>> RECORDS = new ConcurrentHashMap<>();
    /** How many subtasks the running job has: a task returns only when all have started. */
    static volatile int expectedSubtasks;
    /** A BATCH job's regions run one after another: its tasks must not wait for later ones. */
    static volatile boolean batch;

    public static class Recorder extends AbstractInvokable {
        public Recorder(Environment environment) { super(environment); }

        @Override
        public void invoke() {
            Environment env = getEnvironment();
            Map<String, Object> rec = new LinkedHashMap<>();
            rec.put("allocation", env.getTaskInfo().getAllocationIDAsString());
            rec.put("attempt", env.getTaskInfo().getAttemptNumber());
            List<Object> partitions = new ArrayList<>();
            for (ResultPartitionWriter writer : env.getAllWriters()) {
                Map<String, Object> p = new LinkedHashMap<>();
                p.put("dataset", writer.getPartitionId().getPartitionId().getIntermediateDataSetID().toString());
                p.put("partition", writer.getPartitionId().getPartitionId().getPartitionNumber());
                p.put("subpartitions", writer.getNumberOfSubpartitions());
                if (writer instanceof ResultPartition) {
                    p.put("type", ((ResultPartition) writer).getPartitionType().name());
                    p.put("class", writer.getClass().getSimpleName());
                }
                partitions.add(p);
            }
            rec.put("partitions", partitions);
            List<Object> gates = new ArrayList<>();
            for (IndexedInputGate gate : env.getAllInputGates()) {
                List<Object> channels = new ArrayList<>();
                for (int i = 0; i < gate.getNumberOfInputChannels(); i++) {
                    InputChannel channel = gate.getChannel(i);
                    Map<String, Object> c = new LinkedHashMap<>();
                    c.put("class", channel.getClass().getSimpleName());
                    c.put("dataset", channel.getPartitionId().getPartitionId().getIntermediateDataSetID().toString());
                    c.put("partition", channel.getPartitionId().getPartitionId().getPartitionNumber());
                    c.put("subpartitions", channel.getConsumedSubpartitionIndexSet().toString());
                    channels.add(c);
                }
                Map<String, Object> g = new LinkedHashMap<>();
                g.put("gate_index", gate.getGateIndex());
                g.put("channels", channels);
                gates.add(g);
            }
            rec.put("gates", gates);
            RECORDS.put(env.getJobVertexId() + "#" + env.getTaskInfo().getIndexOfThisSubtask(), rec);
            // A streaming job's tasks run until the job ends: none may finish (and free its
            // slot for another pipelined region) before every subtask has been deployed.
            long deadline = System.nanoTime() + 60_000_000_000L;
            try {
                while (!batch && RECORDS.size() < expectedSubtasks && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
            } catch (InterruptedException cancelled) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static JobGraph build(JsonNode spec) {
        JobGraph graph = new JobGraph(new JobID(), spec.get("name").asText());
        graph.setJobType(JobType.valueOf(spec.get("job_type").asText()));
        Map<String, JobVertex> vertices = new LinkedHashMap<>();
        Map<String, SlotSharingGroup> groups = new HashMap<>();
        for (JsonNode v : spec.get("vertices")) {
            JobVertex vertex = new JobVertex(v.get("name").asText(), JobVertexID.fromHexString(v.get("id").asText()));
            vertex.setInvokableClass(Recorder.class);
            vertex.setParallelism(v.get("parallelism").asInt());
            if (v.get("max_parallelism").asInt() > 0) {
                vertex.setMaxParallelism(v.get("max_parallelism").asInt());
            }
            String key = v.get("slot_sharing_group").asText() + "/" + v.get("slot_sharing_group_index").asInt();
            SlotSharingGroup group = groups.computeIfAbsent(key, k -> {
                SlotSharingGroup g = new SlotSharingGroup();
                g.setSlotSharingGroupName(v.get("slot_sharing_group").asText());
                return g;
            });
            vertex.setSlotSharingGroup(group);
            vertices.put(v.get("id").asText(), vertex);
        }
        for (JsonNode v : spec.get("vertices")) {
            JobVertex consumer = vertices.get(v.get("id").asText());
            for (JsonNode input : v.get("inputs")) {
                String ship = input.get("ship_strategy").asText();
                consumer.connectNewDataSetAsInput(
                        vertices.get(input.get("source_vertex").asText()),
                        DistributionPattern.valueOf(input.get("distribution_pattern").asText()),
                        ResultPartitionType.valueOf(input.get("result_partition_type").asText()),
                        new org.apache.flink.runtime.jobgraph.IntermediateDataSetID(),
                        ship.equals("BROADCAST"),
                        ship.equals("FORWARD"));
            }
        }
        for (JobVertex vertex : vertices.values()) {
            graph.addVertex(vertex);
        }
        return graph;
    }

    static Map<String, Object> run(JsonNode spec, int taskManagers, int slots) throws Exception {
        RECORDS.clear();
        JobGraph graph = build(spec);
        int total = 0;
        for (JobVertex vertex : graph.getVertices()) {
            total += vertex.getParallelism();
        }
        expectedSubtasks = total;
        batch = graph.getJobType() == JobType.BATCH;
        Configuration config = new Configuration();
        config.set(RestOptions.BIND_PORT, "0");
        config.set(JobManagerOptions.SLOT_REQUEST_TIMEOUT, Duration.ofSeconds(8));
        config.set(ResourceManagerOptions.STANDALONE_CLUSTER_STARTUP_PERIOD_TIME, Duration.ofSeconds(4));
        MiniClusterConfiguration mc = new MiniClusterConfiguration.Builder()
                .setConfiguration(config)
                .setNumTaskManagers(taskManagers)
                .setNumSlotsPerTaskManager(slots)
                .build();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("taskmanagers", taskManagers);
        out.put("slots_per_taskmanager", slots);
        try (MiniCluster cluster = new MiniCluster(mc)) {
            cluster.start();
            cluster.submitJob(graph).get();
            JobResult result = cluster.requestJobResult(graph.getJobID()).get();
            AccessExecutionGraph archived = cluster.getArchivedExecutionGraph(graph.getJobID()).get();
            out.put("status", String.valueOf(result.getJobStatus().orElse(null)));
            if (result.getSerializedThrowable().isPresent()) {
                Throwable t = result.getSerializedThrowable().get().deserializeError(PhysicalRecorder.class.getClassLoader());
                List<String> chain = new ArrayList<>();
                for (Throwable c = t; c != null; c = c.getCause()) {
                    chain.add(c.getClass().getName() + ": " + c.getMessage());
                }
                out.put("error_chain", chain);
                return out;
            }
            List<Object> subtasks = new ArrayList<>();
            for (AccessExecutionJobVertex vertex : archived.getVerticesTopologically()) {
                for (AccessExecutionVertex ev : vertex.getTaskVertices()) {
                    Map<String, Object> s = new LinkedHashMap<>();
                    s.put("vertex", vertex.getJobVertexId().toString());
                    s.put("name", vertex.getName());
                    s.put("subtask", ev.getParallelSubtaskIndex());
                    s.put("state", ev.getExecutionState().name());
                    s.put("taskmanager", ev.getCurrentExecutionAttempt().getAssignedResourceLocation().getResourceID().toString());
                    Map<String, Object> rec = RECORDS.get(vertex.getJobVertexId() + "#" + ev.getParallelSubtaskIndex());
                    if (rec != null) {
                        s.putAll(rec);
                    }
                    subtasks.add(s);
                }
            }
            out.put("subtasks", subtasks);
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        File outFile = new File(args[0]);
        int runs = Integer.parseInt(args[1]);
        String[] configs = args[2].split(",");
        Map<String, Object> all = new LinkedHashMap<>();
        for (int i = 3; i < args.length; i++) {
            JsonNode spec = JSON.readTree(new File(args[i]));
            String caseName = spec.get("case").asText();
            int maxParallelism = 1;
            for (JsonNode v : spec.get("vertices")) {
                maxParallelism = Math.max(maxParallelism, v.get("parallelism").asInt());
            }
            Map<String, Object> byConfig = new LinkedHashMap<>();
            for (String config : configs) {
                int tms;
                int slots;
                if (config.equals("local")) {
                    tms = 1;
                    slots = maxParallelism;
                } else {
                    String[] parts = config.split("x");
                    tms = Integer.parseInt(parts[0]);
                    slots = Integer.parseInt(parts[1]);
                }
                List<Object> results = new ArrayList<>();
                for (int r = 0; r < runs; r++) {
                    long start = System.nanoTime();
                    results.add(run(spec, tms, slots));
                    System.err.printf("%s %s run %d: %.1f s%n", caseName, config, r, (System.nanoTime() - start) / 1e9);
                }
                byConfig.put(config, results);
            }
            all.put(caseName, byConfig);
            JSON.writeValue(outFile, all);
        }
        System.exit(0);
    }
}
