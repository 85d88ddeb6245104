package io.gosched.web.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The provisioned Grafana dashboard as tests see it: its panels and their PromQL. */
public final class Dashboard {

    /** One query of one panel. */
    public record Query(int panelId, String panel, String refId, String expr) {
        /** The expression with Grafana's variables replaced (as with "All" instances) so Prometheus can run it. */
        public String promql(String rateInterval) {
            return expr.replace("$__rate_interval", rateInterval).replace("$__interval", rateInterval)
                    .replace("$instance", ".*").replace("$node", ".*");
        }

        /** Whether the query reads a meter that exists only in cluster mode (ClusterDashboardTest proves those). */
        public boolean clusterOnly() {
            return readsAny(Dashboard::isClusterOnly);
        }

        /** Whether the query reads the HTTP-target calls' meters ({@link #needsHttpTargets}). */
        public boolean httpTargetsOnly() {
            return readsAny(Dashboard::needsHttpTargets);
        }

        /** Whether a metric the query reads is one {@code meter} picks. */
        private boolean readsAny(java.util.function.Predicate<String> meter) {
            Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                if (meter.test(m.group(1))) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * The HTTP-target calls' meters: registered per allowed prefix at a target's first call, so
     * only where {@code gosched.jobs.http.allowed-targets} lists one and a job called it
     * (PrometheusDashboardTest does; the cluster and compose stacks allow none).
     */
    public static boolean needsHttpTargets(String metricName) {
        return metricName.startsWith("gosched_http_target_");
    }

    /** The cluster row's meters: registered only when gosched.cluster.nats.url is set. */
    public static boolean isClusterOnly(String metricName) {
        return metricName.startsWith("gosched_cluster_") || metricName.equals("gosched_jobs_redelivered_total")
                || metricName.equals("gosched_jobs_lost_total");
    }

    private static final Pattern METRIC = Pattern.compile("\\b([a-z_][a-z0-9_]*)\\s*(?:\\{|\\[|\\)|$)");
    private static final Set<String> PROMQL_WORDS = Set.of("sum", "by", "rate", "increase", "histogram_quantile",
            "le", "kind", "state", "op", "outcome", "uri", "p", "avg", "max", "min", "count", "budget", "reason", "node", "queue", "type", "target");

    public final JsonNode json;

    private Dashboard(JsonNode json) {
        this.json = json;
    }

    /** The repository root: the first ancestor of the working directory that holds {@code deploy/}. */
    public static Path repoRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve("deploy"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("no deploy/ above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    public static Dashboard load() {
        try {
            Path file = repoRoot().resolve("deploy/grafana/dashboards/gosched.json");
            return new Dashboard(JsonMapper.builder().build().readTree(Files.readString(file)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public List<JsonNode> panels() {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode p : json.get("panels")) {
            out.add(p);
            if (p.has("panels")) {
                p.get("panels").forEach(out::add);
            }
        }
        return out;
    }

    public List<Query> queries() {
        List<Query> out = new ArrayList<>();
        for (JsonNode p : panels()) {
            if (!p.has("targets")) {
                continue;
            }
            for (JsonNode t : p.get("targets")) {
                out.add(new Query(p.get("id").asInt(), p.get("title").asString(), t.get("refId").asString(),
                        t.get("expr").asString()));
            }
        }
        return out;
    }

    /** Every metric name the queries select (series names, not functions or labels). */
    public Set<String> metricNames() {
        Set<String> names = new TreeSet<>();
        for (Query q : queries()) {
            String e = q.expr().replaceAll("\"[^\"]*\"", "\"\"").replaceAll("\\[[^]]*]", "[]");
            Matcher m = METRIC.matcher(e);
            while (m.find()) {
                String name = m.group(1);
                if (!PROMQL_WORDS.contains(name)) {
                    names.add(name);
                }
            }
        }
        return names;
    }
}
