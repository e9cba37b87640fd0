import org.apache.flink.api.dag.Transformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.jobgraph.IntermediateDataSet;
import org.apache.flink.runtime.jobgraph.JobEdge;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.jobgraph.jsonplan.JsonPlanGenerator;
import org.apache.flink.runtime.jobmanager.scheduler.SlotSharingGroup;
import org.apache.flink.runtime.rest.util.RestMapperUtils;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.graph.StreamEdge;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.streaming.api.operators.AbstractUdfStreamOperator;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.table.api.CompiledPlan;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.ExplainDetail;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableDescriptor;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.internal.TableEnvironmentImpl;
import org.apache.flink.table.api.internal.TableResultInternal;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.utils.print.PrintStyle;
import org.apache.flink.table.utils.print.RowDataToStringConverter;
import org.apache.flink.table.utils.print.TableauStyle;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.util.StringUtils;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.*;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Records what Flink 2.3 plans, builds and emits for one SQL case (see README.md here).
 *
 * <p>Usage: SqlRecorder CASE.sql DATA_DIR OUT.json OPTIONS_JSON
 *
 * <p>OPTIONS_JSON: {"runs": N, "modes": {"streaming": {"order": ..., "order_key": [...]} |
 * {"skipped": reason}, "batch": ...}, "session_explains": [[details...], ...]}. Every stage runs in
 * a fresh StreamTableEnvironment (parallelism.default=2, table.local-time-zone=UTC) whose setup
 * statements have run, with the ExecNode and Transformation id counters reset to 0.
 */
public class SqlRecorder {
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    static final Pattern SET = Pattern.compile("^SET\\s+'([^']+)'\\s*=\\s*'([^']*)'$", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

    /** Thrown from executeAsync when only the submitted StreamGraph is wanted. */
    static class Captured extends RuntimeException {
        Captured() { super("captured"); }
    }

    /** A local environment that keeps every StreamGraph it is asked to execute. */
    static class RecordingEnv extends LocalStreamEnvironment {
        final List<StreamGraph> graphs = new ArrayList<>();
        final List<String> plans = new ArrayList<>();
        boolean captureOnly;

        RecordingEnv(Configuration config) { super(config); }

        @Override
        public JobClient executeAsync(StreamGraph graph) throws Exception {
            graphs.add(graph);
            plans.add(graph.getStreamingPlanAsJSON());
            if (captureOnly) {
                throw new Captured();
            }
            return super.executeAsync(graph);
        }
    }

    static String caseText;
    static List<String> setup;
    static String query;
    static boolean insert;
    static String mode;
    static String outDir;

    static class Session {
        RecordingEnv env;
        StreamTableEnvironment tEnv;
    }

    static Session fresh() throws Exception {
        Session s = new Session();
        s.env = new RecordingEnv(new Configuration());
        EnvironmentSettings settings = mode.equals("streaming")
                ? EnvironmentSettings.inStreamingMode() : EnvironmentSettings.inBatchMode();
        s.tEnv = StreamTableEnvironment.create(s.env, settings);
        s.tEnv.getConfig().set("parallelism.default", "2");
        s.tEnv.getConfig().set("table.local-time-zone", "UTC");
        for (String stmt : setup) {
            Matcher m = SET.matcher(stmt);
            if (m.matches()) {
                s.tEnv.getConfig().set(m.group(1), m.group(2));
            } else {
                s.tEnv.executeSql(stmt);
            }
        }
        resetCounters(s);
        return s;
    }

    static void resetCounters(Session s) throws Exception {
        ClassLoader plannerLoader = ((TableEnvironmentImpl) s.tEnv).getPlanner().getClass().getClassLoader();
        Method reset = plannerLoader.loadClass("org.apache.flink.table.planner.plan.nodes.exec.ExecNodeContext")
                .getMethod("resetIdCounter");
        reset.invoke(null);
        Field f = Transformation.class.getDeclaredField("ID_COUNTER");
        f.setAccessible(true);
        ((AtomicInteger) f.get(null)).set(0);
    }

    static Map<String, Object> error(Throwable e) {
        Map<String, Object> err = new LinkedHashMap<>();
        err.put("class", e.getClass().getSimpleName());
        err.put("message", e.getMessage());
        Throwable root = ExceptionUtils.stripExecutionException(e);
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        err.put("root_cause", root.getClass().getSimpleName() + ": " + root.getMessage());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("error", err);
        return out;
    }

    static String simple(Object o) {
        String name = o.getClass().getName();
        name = name.substring(name.lastIndexOf('.') + 1);
        return name.replaceAll("\\$\\d+", "\\$N");
    }

    static Map<String, Object> streamGraph(StreamGraph sg) {
        Map<Integer, byte[]> hashes = new StreamGraphHasherV2().traverseStreamGraphAndGenerateHashes(sg);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("job_type", sg.getJobType().name());
        out.put("dynamic", sg.isDynamic());
        out.put("chaining_enabled", sg.isChainingEnabled());
        List<StreamNode> nodes = new ArrayList<>(sg.getStreamNodes());
        nodes.sort(Comparator.comparingInt(StreamNode::getId));
        List<Object> ns = new ArrayList<>();
        for (StreamNode n : nodes) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", n.getId());
            m.put("name", n.getOperatorName());
            m.put("parallelism", n.getParallelism());
            m.put("max_parallelism", n.getMaxParallelism());
            m.put("slot_sharing_group", n.getSlotSharingGroup());
            StreamOperatorFactory<?> factory = n.getOperatorFactory();
            m.put("chaining_strategy", factory == null ? null : factory.getChainingStrategy().name());
            m.put("uid", n.getTransformationUID());
            m.put("operator_id", StringUtils.byteToHexString(hashes.get(n.getId())));
            List<Object> edges = new ArrayList<>();
            for (StreamEdge e : n.getOutEdges()) {
                Map<String, Object> em = new LinkedHashMap<>();
                em.put("target", e.getTargetId());
                em.put("partitioner", e.getPartitioner().toString());
                em.put("type_number", e.getTypeNumber());
                em.put("output_tag", e.getOutputTag() == null ? null : e.getOutputTag().getId());
                em.put("exchange_mode", e.getExchangeMode().name());
                edges.add(em);
            }
            m.put("out_edges", edges);
            m.put("description", n.getOperatorDescription());
            m.put("operator_factory", factory == null ? null : simple(factory));
            if (factory instanceof SimpleOperatorFactory) {
                StreamOperator<?> op = ((SimpleOperatorFactory<?>) factory).getOperator();
                m.put("operator", simple(op));
                if (op instanceof AbstractUdfStreamOperator) {
                    m.put("user_function", simple(((AbstractUdfStreamOperator<?, ?>) op).getUserFunction()));
                }
            }
            m.put("keyed", n.getStatePartitioners().length > 0);
            m.put("managed_memory_weights", String.valueOf(n.getManagedMemoryOperatorScopeUseCaseWeights()));
            ns.add(m);
        }
        out.put("nodes", ns);
        out.put("source_ids", new ArrayList<>(sg.getSourceIDs()));
        out.put("sink_ids", new ArrayList<>(sg.getSinkIDs()));
        return out;
    }

    static Map<String, Object> jobGraph(JobGraph jg) {
        Map<SlotSharingGroup, Integer> groups = new IdentityHashMap<>();
        List<Object> vs = new ArrayList<>();
        for (JobVertex v : jg.getVerticesSortedTopologicallyFromSources()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", v.getID().toString());
            m.put("name", v.getName());
            m.put("parallelism", v.getParallelism());
            m.put("max_parallelism", v.getMaxParallelism());
            SlotSharingGroup g = v.getSlotSharingGroup();
            m.put("slot_sharing_group", g == null ? null : g.getSlotSharingGroupName());
            m.put("slot_sharing_group_index", g == null ? null : groups.computeIfAbsent(g, k -> groups.size()));
            m.put("invokable", v.getInvokableClassName().substring(v.getInvokableClassName().lastIndexOf('.') + 1));
            List<Object> ids = new ArrayList<>();
            for (OperatorIDPair p : v.getOperatorIDs()) {
                Map<String, Object> pm = new LinkedHashMap<>();
                pm.put("generated", p.getGeneratedOperatorID().toString());
                pm.put("user_defined", p.getUserDefinedOperatorID().map(Object::toString).orElse(null));
                ids.add(pm);
            }
            m.put("operator_ids", ids);
            List<Object> inputs = new ArrayList<>();
            for (JobEdge e : v.getInputs()) {
                IntermediateDataSet ds = e.getSource();
                Map<String, Object> im = new LinkedHashMap<>();
                im.put("source_vertex", ds.getProducer().getID().toString());
                im.put("ship_strategy", e.getShipStrategyName());
                im.put("distribution_pattern", e.getDistributionPattern().name());
                im.put("result_partition_type", ds.getResultType().name());
                inputs.add(im);
            }
            m.put("inputs", inputs);
            vs.add(m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("vertices", vs);
        return out;
    }

    static Map<String, Object> jobPlan(JobGraph jg) throws Exception {
        JsonNode plan = JSON.readTree(RestMapperUtils.getStrictObjectMapper().writeValueAsString(JsonPlanGenerator.generatePlan(jg)));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("name", plan.get("name").asText());
        out.put("type", plan.get("type").asText());
        List<Object> nodes = new ArrayList<>();
        for (JsonNode n : plan.get("nodes")) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", n.get("id").asText());
            m.put("operator", n.get("operator").asText());
            m.put("parallelism", n.get("parallelism").asInt());
            m.put("operator_strategy", n.get("operator_strategy").asText());
            m.put("description", n.get("description").asText());
            m.put("optimizer_properties", n.get("optimizer_properties"));
            if (n.has("inputs") && n.get("inputs").size() > 0) {
                List<Object> ins = new ArrayList<>();
                for (JsonNode i : n.get("inputs")) {
                    Map<String, Object> im = new LinkedHashMap<>();
                    im.put("id", i.get("id").asText());
                    im.put("num", i.get("num").asInt());
                    im.put("exchange", i.get("exchange").asText());
                    im.put("ship_strategy", i.get("ship_strategy").asText());
                    ins.add(im);
                }
                m.put("inputs", ins);
            }
            nodes.add(m);
        }
        out.put("nodes", nodes);
        return out;
    }

    // ---- canonical orders, as check_sql.py compares them ----

    static int compareField(String a, String b) {
        BigDecimal x = number(a);
        BigDecimal y = number(b);
        if (x != null && y != null) {
            return x.compareTo(y);
        }
        if (x != null) {
            return -1;
        }
        if (y != null) {
            return 1;
        }
        return a.compareTo(b);
    }

    static BigDecimal number(String s) {
        try {
            return new BigDecimal(s.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    static Comparator<List<String>> byFields(List<Integer> idx) {
        return (r1, r2) -> {
            for (int i : idx) {
                int c = compareField(r1.get(i), r2.get(i));
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        };
    }

    static List<List<String>> canonical(List<List<String>> rows, String order, List<Integer> key) {
        List<List<String>> out = new ArrayList<>(rows);
        if (order.equals("TOTAL") || out.isEmpty()) {
            return out;
        }
        if (order.equals("PER_KEY")) {
            out.sort(byFields(key));
            return out;
        }
        List<Integer> idx = new ArrayList<>();
        for (int i = 1; i < out.get(0).size(); i++) {
            idx.add(i);
        }
        idx.add(0);
        out.sort(byFields(idx));
        return out;
    }

    static List<List<String>> materialize(List<List<String>> rows) {
        Map<List<String>, Integer> count = new LinkedHashMap<>();
        for (List<String> r : rows) {
            List<String> k = r.subList(1, r.size());
            count.merge(new ArrayList<>(k), r.get(0).startsWith("+") ? 1 : -1, Integer::sum);
        }
        List<List<String>> out = new ArrayList<>();
        count.forEach((k, n) -> {
            for (int i = 0; i < n; i++) {
                List<String> row = new ArrayList<>();
                row.add("+I");
                row.addAll(k);
                out.add(row);
            }
        });
        return canonical(out, "MULTISET", List.of());
    }

    static String tableau(ResolvedSchema schema, RowDataToStringConverter converter, List<List<String>> rows) {
        StringWriter sw = new StringWriter();
        PrintWriter pw = new PrintWriter(sw);
        if (mode.equals("streaming")) {
            TableauStyle style = PrintStyle.tableauWithTypeInferredColumnWidths(schema, converter, 30, false, true);
            style.printBorderLine(pw);
            style.printColumnNamesTableauRow(pw);
            style.printBorderLine(pw);
            for (List<String> r : rows) {
                style.printTableauRow(r.toArray(new String[0]), pw);
            }
            if (rows.size() > 0) {
                style.printBorderLine(pw);
            }
            pw.println("Received a total of " + rows.size() + " " + (rows.size() > 1 ? "rows" : "row"));
        } else {
            if (rows.isEmpty()) {
                pw.println("Empty set");
            } else {
                TableauStyle style = PrintStyle.tableauWithDataInferredColumnWidths(schema, converter, 30, false, false);
                List<String[]> fields = rows.stream().map(r -> r.subList(1, r.size()).toArray(new String[0])).collect(Collectors.toList());
                style.inferColumnWidth(fields);
                style.printBorderLine(pw);
                style.printColumnNamesTableauRow(pw);
                style.printBorderLine(pw);
                for (String[] f : fields) {
                    style.printTableauRow(f, pw);
                }
                style.printBorderLine(pw);
                pw.println(rows.size() + " " + (rows.size() > 1 ? "rows" : "row") + " in set");
            }
        }
        pw.flush();
        return sw.toString();
    }

    // ---- print sink stdout and filesystem sink files ----

    static final ByteArrayOutputStream CAPTURED = new ByteArrayOutputStream();
    static final PrintStream REAL_OUT = System.out;

    static List<List<String>> stdoutLines(String text) {
        List<List<String>> out = new ArrayList<>();
        for (String ln : text.split("\n")) {
            int i = ln.indexOf("> ");
            if (i > 0 && ln.substring(0, i).chars().allMatch(Character::isDigit)) {
                out.add(List.of(ln.substring(0, i + 1), ln.substring(i + 2)));
            } else if (ln.startsWith("+I") || ln.startsWith("-U") || ln.startsWith("+U") || ln.startsWith("-D")) {
                out.add(List.of("", ln));
            }
        }
        return out;
    }

    static final Pattern UUID_RE = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    static Map<String, Object> sinkFiles(Path dir) throws Exception {
        List<String> names = new ArrayList<>();
        List<List<String>> lines = new ArrayList<>();
        if (Files.exists(dir)) {
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : walk.filter(Files::isRegularFile).sorted().collect(Collectors.toList())) {
                    String rel = dir.relativize(p).toString();
                    names.add(UUID_RE.matcher(rel).replaceAll("<uuid>"));
                    for (String ln : Files.readAllLines(p, StandardCharsets.UTF_8)) {
                        lines.add(List.of(ln));
                    }
                }
            }
        }
        Collections.sort(names);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("files", names);
        out.put("lines", lines);
        return out;
    }

    // ---- the stages ----

    static List<String> splitStatements(String text) {
        String body = Arrays.stream(text.split("\n"))
                .filter(l -> !l.strip().startsWith("--"))
                .collect(Collectors.joining("\n"));
        List<String> out = new ArrayList<>();
        for (String s : body.split("(?m);\\s*$")) {
            if (!s.strip().isEmpty()) {
                out.add(s.strip());
            }
        }
        return out;
    }

    static String explain(String q, ExplainDetail... details) throws Exception {
        Session s = fresh();
        return s.tEnv.explainSql(q, details);
    }

    static Map<String, Object> recordMode(JsonNode opts, int runs, JsonNode sessionExplains) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        boolean streaming = mode.equals("streaming");
        // EXPLAIN texts
        try {
            out.put("explain", explain(query));
        } catch (Exception e) {
            out.put("explain", error(e));
            if (streaming) {
                out.put("explain_changelog_mode", errorOf(() -> explain(query, ExplainDetail.CHANGELOG_MODE)));
            }
            out.put("explain_json_execution_plan", errorOf(() -> explain(query, ExplainDetail.JSON_EXECUTION_PLAN)));
            out.put("graph", errorOf(() -> {
                Session s = fresh();
                s.env.captureOnly = true;
                s.tEnv.executeSql(query);
                return null;
            }));
            out.put("error_expected", true);
            return out;
        }
        if (streaming) {
            out.put("explain_changelog_mode", explain(query, ExplainDetail.CHANGELOG_MODE));
        }
        String jsonPlan = explain(query, ExplainDetail.JSON_EXECUTION_PLAN);
        String marker = "== Physical Execution Plan ==\n";
        out.put("physical_execution_plan", JSON.readTree(jsonPlan.substring(jsonPlan.indexOf(marker) + marker.length())));
        out.put("explain_json_execution_plan", jsonPlan);
        if (sessionExplains != null) {
            // One session, several EXPLAINs: the id counters go on from one to the next.
            Session s = fresh();
            List<Object> seq = new ArrayList<>();
            for (JsonNode detailList : sessionExplains) {
                List<ExplainDetail> ds = new ArrayList<>();
                List<String> names = new ArrayList<>();
                for (JsonNode d : detailList) {
                    ds.add(ExplainDetail.valueOf(d.asText()));
                    names.add(d.asText());
                }
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("details", names);
                e.put("text", s.tEnv.explainSql(query, ds.toArray(new ExplainDetail[0])));
                seq.add(e);
            }
            out.put("explain_session", seq);
        }
        // Compiled plan (streaming only)
        if (streaming) {
            try {
                Session s = fresh();
                String stmt;
                if (insert) {
                    stmt = query;
                } else {
                    ResolvedSchema schema = s.tEnv.sqlQuery(query).getResolvedSchema();
                    Schema.Builder b = Schema.newBuilder();
                    for (Column c : schema.getColumns()) {
                        b.column(c.getName(), c.getDataType().nullable());
                    }
                    s.tEnv.createTemporaryTable("oracle_blackhole_sink",
                            TableDescriptor.forConnector("blackhole").schema(b.build()).build());
                    stmt = "INSERT INTO oracle_blackhole_sink " + query;
                    resetCounters(s);
                }
                out.put("compiled_plan_statement", stmt);
                CompiledPlan plan = s.tEnv.compilePlanSql(stmt);
                out.put("compiled_plan", JSON.readTree(plan.asJsonString()));
            } catch (Exception e) {
                out.put("compiled_plan", error(e));
            }
        }
        // The pipeline that executing the statement submits
        Session gs = fresh();
        gs.env.captureOnly = true;
        try {
            gs.tEnv.executeSql(query);
        } catch (Exception e) {
            if (ExceptionUtils.findThrowable(e, Captured.class).isEmpty()) {
                out.put("graph", error(e));
                return out;
            }
        }
        StreamGraph sg = gs.env.graphs.get(0);
        String recordedPlan = gs.env.plans.get(0);
        out.put("job_name", sg.getJobName());
        out.put("stream_plan", JSON.readTree(recordedPlan));
        out.put("stream_graph", streamGraph(sg));
        JobGraph jg = sg.getJobGraph(SqlRecorder.class.getClassLoader(), null);
        out.put("job_graph", jobGraph(jg));
        out.put("job_plan", jobPlan(jg));
        if (opts.has("no_rows")) {
            return out;
        }
        // Executions
        String order = opts.get("order").asText();
        List<Integer> key = new ArrayList<>();
        if (opts.has("order_key")) {
            for (JsonNode k : opts.get("order_key")) {
                key.add(k.asInt());
            }
        }
        boolean equal = true;
        List<List<List<String>>> allRuns = new ArrayList<>();
        List<Map<String, Object>> allFiles = new ArrayList<>();
        List<Map<String, Object>> columns = null;
        ResolvedSchema schema = null;
        RowDataToStringConverter converter = null;
        boolean printSink = false;
        for (int r = 0; r < runs; r++) {
            Path sinkDir = Path.of(outDir);
            Session s = freshWithOut(sinkDir);
            List<List<String>> rows = new ArrayList<>();
            try {
                if (insert) {
                    CAPTURED.reset();
                    System.setOut(new PrintStream(CAPTURED, true, StandardCharsets.UTF_8));
                    try {
                        s.tEnv.executeSql(query).await();
                    } finally {
                        System.out.flush();
                        System.setOut(REAL_OUT);
                    }
                    String text = CAPTURED.toString(StandardCharsets.UTF_8);
                    rows = stdoutLines(text);
                    printSink = printSink || !rows.isEmpty();
                    allFiles.add(sinkFiles(sinkDir));
                } else {
                    TableResult result = s.tEnv.executeSql(query);
                    TableResultInternal internal = (TableResultInternal) result;
                    schema = result.getResolvedSchema();
                    converter = internal.getRowDataToStringConverter();
                    try (CloseableIterator<RowData> it = internal.collectInternal()) {
                        while (it.hasNext()) {
                            RowData row = it.next();
                            List<String> fields = new ArrayList<>();
                            fields.add(row.getRowKind().shortString());
                            fields.addAll(Arrays.asList(converter.convert(row)));
                            rows.add(fields);
                        }
                    }
                    columns = new ArrayList<>();
                    for (Column c : schema.getColumns()) {
                        Map<String, Object> cm = new LinkedHashMap<>();
                        cm.put("name", c.getName());
                        cm.put("type", c.getDataType().toString());
                        columns.add(cm);
                    }
                }
            } catch (Exception e) {
                System.setOut(REAL_OUT);
                out.put("rows_error", error(e).get("error"));
                return out;
            }
            equal = equal && s.env.plans.size() == 1 && s.env.plans.get(0).equals(recordedPlan);
            allRuns.add(rows);
        }
        out.put("executed_graph_equals_recorded", equal);
        if (!insert) {
            out.put("columns", columns);
        }
        out.put("order", order);
        out.put("order_key", key);
        out.put("runs_checked", runs);
        List<List<String>> canon0 = canonical(allRuns.get(0), order.equals("FINAL_ONLY") ? "MULTISET" : order, key);
        boolean reproducible = true;
        List<Object> observed = new ArrayList<>();
        for (List<List<String>> run : allRuns) {
            if (order.equals("FINAL_ONLY")) {
                reproducible &= materialize(run).equals(materialize(allRuns.get(0)));
            } else {
                reproducible &= canonical(run, order, key).equals(canon0);
            }
            observed.add(run.equals(allRuns.get(0)) ? "same sequence as run 0" : "sequence differs from run 0");
        }
        if (insert) {
            Map<String, Object> files0 = allFiles.get(0);
            for (Map<String, Object> f : allFiles) {
                @SuppressWarnings("unchecked")
                List<List<String>> lines = (List<List<String>>) f.get("lines");
                @SuppressWarnings("unchecked")
                List<List<String>> lines0 = (List<List<String>>) files0.get("lines");
                reproducible &= canonical(lines, "MULTISET", List.of()).equals(canonical(lines0, "MULTISET", List.of()));
                reproducible &= f.get("files").equals(files0.get("files"));
            }
        }
        out.put("reproducible", reproducible);
        // Which claims held over these runs: a guide for choosing the case's claim (too few runs
        // can make a claim look safe; the plan's parallelism and exchanges decide).
        List<String> holding = new ArrayList<>();
        for (String claim : List.of("TOTAL", "PER_KEY", "MULTISET")) {
            if (claim.equals("PER_KEY") && key.isEmpty()) {
                continue;
            }
            boolean holds = true;
            for (List<List<String>> run : allRuns) {
                holds &= canonical(run, claim, key).equals(canonical(allRuns.get(0), claim, key));
            }
            if (holds) {
                holding.add(claim);
            }
        }
        observed.add("claims holding over the runs: " + holding);
        out.put("runs_observed", observed);
        if (insert) {
            if (printSink) {
                out.put("stdout_lines", canon0);
            }
            @SuppressWarnings("unchecked")
            List<List<String>> lines0 = (List<List<String>>) allFiles.get(0).get("lines");
            if (!lines0.isEmpty() || !((List<?>) allFiles.get(0).get("files")).isEmpty()) {
                Map<String, Object> files = new LinkedHashMap<>();
                files.put("files", allFiles.get(0).get("files"));
                List<String> sorted = canonical(lines0, "MULTISET", List.of()).stream()
                        .map(l -> l.get(0)).collect(Collectors.toList());
                files.put("lines", sorted);
                out.put("sink_files", files);
            }
            return out;
        }
        if (opts.has("keep_runs")) {
            // Informative only: the changelog of every run as it came, to show what varies.
            out.put("rows_per_run", allRuns);
        }
        if (order.equals("FINAL_ONLY")) {
            out.put("rows", null);
            out.put("final_rows", materialize(allRuns.get(0)));
            out.put("sql_client_tableau", null);
        } else {
            out.put("rows", canon0);
            out.put("final_rows", materialize(allRuns.get(0)));
            out.put("sql_client_tableau", tableau(schema, converter, canon0));
        }
        return out;
    }

    /** A fresh session whose ${SQL_OUT} directory is empty again. */
    static Session freshWithOut(Path sinkDir) throws Exception {
        if (Files.exists(sinkDir)) {
            try (Stream<Path> walk = Files.walk(sinkDir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        Files.createDirectories(sinkDir);
        return fresh();
    }

    interface Stage {
        Object run() throws Exception;
    }

    static Object errorOf(Stage stage) {
        try {
            stage.run();
            return null;
        } catch (Exception e) {
            return error(e);
        }
    }

    public static void main(String[] args) throws Exception {
        String caseFile = args[0];
        String dataDir = args[1];
        File outFile = new File(args[2]);
        JsonNode options = JSON.readTree(args[3]);
        outDir = Files.createTempDirectory("sqlrec-out").toString();
        caseText = Files.readString(Path.of(caseFile)).replace("${SQL_DATA}", dataDir).replace("${SQL_OUT}", outDir);
        List<String> stmts = splitStatements(caseText);
        setup = stmts.subList(0, stmts.size() - 1);
        query = stmts.get(stmts.size() - 1);
        insert = query.strip().toUpperCase(Locale.ROOT).startsWith("INSERT");
        int runs = options.has("runs") ? options.get("runs").asInt() : 2;
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("setup_statements", setup);
        out.put("query", query);
        for (String m : List.of("streaming", "batch")) {
            mode = m;
            JsonNode mo = options.get("modes").get(m);
            if (mo.has("skipped")) {
                out.put(m, Map.of("skipped", mo.get("skipped").asText()));
                continue;
            }
            long start = System.nanoTime();
            out.put(m, recordMode(mo, runs, options.get("session_explains")));
            System.err.printf("%s %s: %.1f s%n", caseFile, m, (System.nanoTime() - start) / 1e9);
        }
        JSON.writeValue(outFile, out);
        System.exit(0);
    }
}
