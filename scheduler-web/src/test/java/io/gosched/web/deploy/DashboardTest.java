package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** The dashboard JSON is provisionable and covers what issue 6 asks for. */
class DashboardTest {

    private final Dashboard dashboard = Dashboard.load();

    @Test
    void provisionableAsIs() {
        assertThat(dashboard.json.get("uid").asString()).isEqualTo("gosched");
        assertThat(dashboard.json.get("id").isNull()).isTrue();
        assertThat(dashboard.json.has("__inputs")).as("UI-export inputs do not resolve when provisioned").isFalse();
        Set<Integer> ids = new HashSet<>();
        for (JsonNode p : dashboard.panels()) {
            assertThat(ids.add(p.get("id").asInt())).as("unique panel id %s", p.get("id")).isTrue();
            if (p.has("targets")) {
                assertThat(p.get("datasource").get("uid").asString()).as(p.get("title").asString()).isEqualTo("prometheus");
            }
        }
    }

    @Test
    void hasPanelsForEveryConcern() {
        List<String> kinds = dashboard.panels().stream().map(p -> p.get("type").asString()).toList();
        assertThat(kinds).contains("heatmap", "timeseries", "stat");
        assertThat(dashboard.metricNames()).contains(
                "gosched_sched_latencies_seconds_bucket", "gosched_runqueue_local_goroutines",
                "gosched_runqueue_global_goroutines", "gosched_threads", "gosched_steals_total",
                "gosched_preemptions_total", "gosched_jobs_finished_total", "gosched_jobs_duration_seconds_bucket",
                "gosched_jobs_live", "gosched_sched_goroutines_runnable_goroutines", "gosched_channel_operations_total",
                "gosched_api_retained_bytes", "gosched_api_budget_max_bytes", "gosched_api_budget_refusals_total",
                "gosched_jobs_evicted_total", "gosched_api_streams_open", "gosched_api_channel_calls_pending");
        JsonNode heatmap = dashboard.panels().stream().filter(p -> p.get("type").asString().equals("heatmap")).findFirst().orElseThrow();
        assertThat(heatmap.get("targets").get(0).get("format").asString()).isEqualTo("heatmap");
        assertThat(heatmap.get("targets").get(0).get("expr").asString()).contains("sum by (le)");
    }

    @Test
    void everySeriesIsScopedToTheInstanceVariable() {
        JsonNode variable = dashboard.json.get("templating").get("list").get(0);
        assertThat(variable.get("name").asString()).isEqualTo("instance");
        assertThat(variable.get("allValue").asString()).isEqualTo(".*");
        for (Dashboard.Query q : dashboard.queries()) {
            int series = q.expr().split("\\b(gosched|http|jvm|process|system)_[a-z0-9_]+", -1).length - 1;
            int scoped = q.expr().split("instance=~\"\\$instance\"", -1).length - 1;
            assertThat(scoped).as("%s [%s] %s", q.panel(), q.refId(), q.expr()).isEqualTo(series).isPositive();
        }
    }

    @Test
    void everySeriesIsScopedToTheNodeVariableAndTheClusterRowShowsEachNode() {
        JsonNode variable = dashboard.json.get("templating").get("list").get(1);
        assertThat(variable.get("name").asString()).isEqualTo("node");
        assertThat(variable.get("allValue").asString()).as("All also matches series without a node (embedded mode)").isEqualTo(".*");
        assertThat(variable.get("definition").asString()).isEqualTo("label_values(gosched_uptime_seconds, node)");
        for (Dashboard.Query q : dashboard.queries()) {
            int series = q.expr().split("\\b(gosched|http|jvm|process|system)_[a-z0-9_]+", -1).length - 1;
            int scoped = q.expr().split("node=~\"\\$node\"", -1).length - 1;
            assertThat(scoped).as("%s [%s] %s", q.panel(), q.refId(), q.expr()).isEqualTo(series).isPositive();
        }
        assertThat(dashboard.metricNames()).contains("gosched_jobs_redelivered_total", "gosched_jobs_lost_total",
                "gosched_cluster_queue_depth", "gosched_cluster_queue_pending_acks", "gosched_cluster_pull_latency_seconds_bucket",
                "gosched_cluster_connected", "gosched_cluster_reconnects_total", "process_cpu_usage");
        List<Dashboard.Query> cluster = clusterQueries(dashboard);
        assertThat(cluster).hasSizeGreaterThanOrEqualTo(10);
        assertThat(cluster).as("every cluster panel keeps the nodes apart").allSatisfy(q -> assertThat(q.expr()).as(q.panel())
                .matches("(?s).*\\bby \\((le, )?node\\b.*"));
    }

    /** The queries of the panels in the cluster row: those after it, up to the next row, in the dashboard's order. */
    static List<Dashboard.Query> clusterQueries(Dashboard dashboard) {
        return rowQueries(dashboard, "Cluster");
    }

    /** The queries of the panels of the row whose title starts with {@code title}, in the dashboard's order. */
    static List<Dashboard.Query> rowQueries(Dashboard dashboard, String title) {
        Set<Integer> ids = new HashSet<>();
        boolean in = false;
        for (JsonNode p : dashboard.panels()) {
            if (p.get("type").asString().equals("row")) {
                in = p.get("title").asString().startsWith(title);
            } else if (in) {
                ids.add(p.get("id").asInt());
            }
        }
        assertThat(ids).as("panels under a row titled '%s...'", title).isNotEmpty();
        return dashboard.queries().stream().filter(q -> ids.contains(q.panelId())).toList();
    }

    @Test
    void theJobsByTypeRowShowsEachTypesRatesDurationsAndTheHttpTargets() {
        List<Dashboard.Query> byType = rowQueries(dashboard, "Jobs by type");
        assertThat(byType).extracting(Dashboard.Query::expr).anySatisfy(e -> assertThat(e).contains("gosched_jobs_by_type_submitted_total"))
                .anySatisfy(e -> assertThat(e).contains("gosched_jobs_by_type_finished_total").contains("state=\"succeeded\""))
                .anySatisfy(e -> assertThat(e).contains("gosched_jobs_by_type_finished_total").contains("failed"))
                .anySatisfy(e -> assertThat(e).contains("gosched_jobs_by_type_retried_total"))
                .anySatisfy(e -> assertThat(e).startsWith("histogram_quantile(0.5, sum by (le, type) (rate(gosched_jobs_by_type_attempt_duration_seconds_bucket"))
                .anySatisfy(e -> assertThat(e).startsWith("histogram_quantile(0.99, sum by (le, type) (rate(gosched_jobs_by_type_attempt_duration_seconds_bucket"))
                .anySatisfy(e -> assertThat(e).contains("sum by (target, outcome) (rate(gosched_http_target_requests_total"))
                .anySatisfy(e -> assertThat(e).startsWith("histogram_quantile(0.99, sum by (le, target) (rate(gosched_http_target_duration_seconds_bucket"));
        assertThat(byType).as("every query of the row keeps the types (or targets) apart")
                .allSatisfy(q -> assertThat(q.expr()).as(q.panel()).matches("(?s).*\\bby \\((le, )?(type|target)\\b.*"));
        assertThat(byType).filteredOn(Dashboard.Query::httpTargetsOnly).hasSize(3);
    }

    @Test
    void metricNameExtractionSeesSeriesNotFunctions() {
        assertThat(dashboard.metricNames()).doesNotContain("rate", "sum", "histogram_quantile", "le", "by")
                .allMatch(n -> n.matches("[a-z_][a-z0-9_]*"));
    }
}
