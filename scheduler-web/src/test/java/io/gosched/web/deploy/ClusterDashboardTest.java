package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.cluster.testing.NatsServer;
import io.gosched.web.MeterTraffic;
import io.gosched.web.cluster.ServiceNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;

/**
 * The dashboard against a real cluster: two service nodes (JVMs of their own) on a real
 * nats-server, scraped by a real Prometheus run with the compose stack's own scrape config
 * (deploy/prometheus/prometheus-cluster.yml, its targets pointed at the nodes' loopback ports).
 * Every query of the dashboard must return data, and every query of the cluster row must return
 * a series for each node: a panel that silently shows one node out of three is a broken panel.
 */
class ClusterDashboardTest {

    static final List<String> NODES = List.of("dash-1", "dash-2");

    @TempDir
    Path dir;
    NatsServer nats;
    final List<ServiceNode> nodes = new ArrayList<>();
    LocalPrometheus prometheus;

    @AfterEach
    void stop() throws InterruptedException {
        if (prometheus != null) {
            prometheus.close();
        }
        nodes.forEach(ServiceNode::close);
        if (nats != null) {
            nats.close();
        }
    }

    @Test
    void everyQueryReturnsDataAndEveryClusterPanelASeriesPerNode() throws Exception {
        assumeTrue(Files.isExecutable(LocalPrometheus.BINARY), LocalPrometheus.MISSING);
        nats = NatsServer.start(dir.resolve("nats"));
        List<CompletableFuture<ServiceNode>> starting = new ArrayList<>();
        for (String id : NODES) {
            starting.add(CompletableFuture.supplyAsync(() -> ServiceNode.start(dir, id, nats.url())));
        }
        for (CompletableFuture<ServiceNode> s : starting) {
            nodes.add(s.get(330, TimeUnit.SECONDS));
        }
        List<String> targets = nodes.stream().map(n -> "127.0.0.1:" + n.port()).toList();
        prometheus = LocalPrometheus.startWithConfig(dir, composeScrapeConfig(targets));

        List<WebTestClient> clients = nodes.stream().map(n -> WebTestClient.bindToServer().baseUrl(n.baseUrl())
                .responseTimeout(Duration.ofSeconds(30)).build()).toList();
        for (int i = 0; i < clients.size(); i++) {
            MeterTraffic.runJobAndChannelOps(clients.get(i), "dash-" + i);
        }
        awaitScrapes(6 * nodes.size());
        for (int i = 0; i < clients.size(); i++) {
            MeterTraffic.runJobAndChannelOps(clients.get(i), "dash-again-" + i); // counters move inside the rate window
        }
        awaitScrapes(10 * nodes.size());

        Dashboard dashboard = Dashboard.load();
        List<Dashboard.Query> cluster = DashboardTest.clusterQueries(dashboard);
        List<String> failures = new ArrayList<>();
        for (Dashboard.Query q : dashboard.queries()) {
            if (q.httpTargetsOnly()) {
                continue; // no target is allowed on these nodes: PrometheusDashboardTest calls one and runs these
            }
            JsonNode r = prometheus.query(q.promql(PrometheusDashboardTest.RATE_INTERVAL));
            String what = q.panel() + " [" + q.refId() + "] " + q.expr();
            if (!"success".equals(r.path("status").asString())) {
                failures.add(what + " -> error " + r.path("error").asString());
                continue;
            }
            JsonNode result = r.path("data").path("result");
            if (result.isEmpty()) {
                failures.add(what + " -> no data");
                continue;
            }
            if (cluster.contains(q)) {
                Set<String> seen = new TreeSet<>();
                result.forEach(s -> seen.add(s.path("metric").path("node").asString()));
                if (!seen.containsAll(NODES)) {
                    failures.add(what + " -> series for nodes " + seen + ", not for each of " + NODES);
                }
            }
        }
        assertThat(failures).as("dashboard queries without data, or without every node").isEmpty();
        assertThat(prometheus.value("count(count by (node) (gosched_uptime_seconds{service=\"gosched\"}))"))
                .as("the compose file's target labels are what Prometheus used").isEqualTo(NODES.size());
    }

    /** deploy/prometheus/prometheus-cluster.yml as it is, but scraping every second and the nodes on loopback. */
    @SuppressWarnings("unchecked")
    static String composeScrapeConfig(List<String> targets) throws Exception {
        Map<String, Object> config = new Yaml().load(Files.readString(Dashboard.repoRoot().resolve("deploy/prometheus/prometheus-cluster.yml")));
        Map<String, Object> global = (Map<String, Object>) config.get("global");
        global.put("scrape_interval", "1s");
        global.put("evaluation_interval", "1s");
        Map<String, Object> job = (Map<String, Object>) ((List<Object>) config.get("scrape_configs")).get(0);
        Map<String, Object> statics = (Map<String, Object>) ((List<Object>) job.get("static_configs")).get(0);
        assertThat((List<String>) statics.get("targets")).as("the compose file scrapes three nodes").hasSize(3);
        statics.put("targets", targets);
        return new Yaml().dump(config);
    }

    private void awaitScrapes(int n) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (System.nanoTime() < deadline) {
            assertThat(prometheus.alive()).as("prometheus exited: %s", prometheus.log()).isTrue();
            if (prometheus.value("sum(sum_over_time(up{job=\"gosched\"}[5m]))") >= n) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("Prometheus did not scrape the nodes " + n + " times in 90 s; log:\n" + prometheus.log());
    }
}
