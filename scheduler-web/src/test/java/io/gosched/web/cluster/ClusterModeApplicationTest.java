package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.testing.NatsServer;
import io.gosched.GoschedApplication;
import io.gosched.web.MeterTraffic;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * The one jar in cluster mode, started the way a user starts it (command-line arguments), with
 * {@code gosched.cluster.nats.url} pointing at a real nats-server: it starts, reports NATS in its
 * health and tags every metric with its node. (Without the property, {@code GoschedApplicationTest}
 * shows the embedded default as it was: its metric lines carry no node tag.)
 */
class ClusterModeApplicationTest {

    @TempDir
    Path dir;
    NatsServer nats;
    ConfigurableApplicationContext app;

    @AfterEach
    void stop() {
        if (app != null) {
            app.close();
        }
        if (nats != null) {
            nats.close();
        }
    }

    @Test
    void healthShowsNatsAndEveryMetricCarriesTheNode() {
        nats = NatsServer.start(dir);
        app = new SpringApplicationBuilder(GoschedApplication.class).run("--server.port=0",
                "--gosched.cluster.nats.url=" + nats.url(), "--gosched.cluster.node-id=web-test",
                "--management.endpoint.health.show-details=always");
        int port = app.getEnvironment().getProperty("local.server.port", Integer.class);
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).build();

        JsonNode health = client.get().uri("/actuator/health").exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        assertThat(health.path("components").path("nats").path("status").asText()).isEqualTo("UP");
        assertThat(health.path("components").path("nats").path("details").path("node").asText()).isEqualTo("web-test");

        MeterTraffic.runJobAndChannelOps(client, "cluster-app-test");
        String text = MeterTraffic.scrape(client);
        assertThat(text).containsPattern("(?m)^gosched_cluster_connected\\{[^}]*node=\"web-test\"[^}]*} 1");
        assertThat(text).containsPattern("(?m)^gosched_jobs_redelivered_total\\{[^}]*node=\"web-test\"");
        assertThat(text).containsPattern("(?m)^gosched_cluster_queue_depth\\{[^}]*queue=\"p9\"");
        assertThat(text).as("the runtime's meters are tagged too, the latency histogram included")
                .containsPattern("(?m)^gosched_goroutines\\{application=\"gosched\",node=\"web-test\"}")
                .containsPattern("(?m)^gosched_sched_latencies_seconds_count\\{application=\"gosched\",node=\"web-test\"} [1-9]");
        assertThat(app.getBean(ClusterConnection.class).isUp()).isTrue();
    }

    @Test
    void withoutNatsTheClusterNodeRefusesToStartNamingTheUrl() {
        Throwable failure = null;
        try {
            app = new SpringApplicationBuilder(GoschedApplication.class).run("--server.port=0",
                    "--gosched.cluster.nats.url=nats://127.0.0.1:1", "--gosched.cluster.connect-timeout=1s");
        } catch (RuntimeException e) {
            failure = e;
        }
        StringBuilder messages = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        assertThat(messages.toString()).contains("gosched.cluster.nats.url: cannot reach NATS at nats://127.0.0.1:1");
    }
}
