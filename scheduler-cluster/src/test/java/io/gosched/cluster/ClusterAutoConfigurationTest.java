package io.gosched.cluster;

import java.nio.file.Path;
import java.time.Duration;

import io.gosched.service.config.GoschedServiceAutoConfiguration;
import io.gosched.cluster.channel.NatsChannelDirectory;
import io.gosched.cluster.job.NatsJobQueue;
import io.gosched.cluster.job.NatsJobStore;
import io.gosched.cluster.testing.NatsServer;
import io.nats.client.Connection;
import io.nats.client.Nats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cluster mode switches on with {@code gosched.cluster.nats.url} and nothing else; its
 * properties are validated at start-up like the project's others, naming the bad one.
 */
class ClusterAutoConfigurationTest {

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GoschedClusterAutoConfiguration.class, GoschedServiceAutoConfiguration.class,
                    org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration.class))
            .withPropertyValues("gosched.runtime.gomaxprocs=1");

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"gosched.runtime.gomaxprocs=1", "gosched.cluster.nats.url=", "gosched.cluster.nats.url=  "})
    void withoutAUrlNothingOfClusterModeExistsOrConnects(String property) {
        runner.withPropertyValues(property).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean(ClusterConnection.class).doesNotHaveBean(NatsJobQueue.class)
                    .doesNotHaveBean(ClusterProperties.class);
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"gosched.cluster.nats.url=localhost:4222", "gosched.cluster.nats.url=nats://a:1 nats://b:2",
            "gosched.cluster.ack-wait=0s", "gosched.cluster.ack-wait=2h", "gosched.cluster.max-deliver=0",
            "gosched.cluster.max-deliver=1000", "gosched.cluster.node-id=two words", "gosched.cluster.node-id=a.b",
            "gosched.cluster.replicas=0", "gosched.cluster.heartbeat=1ms", "gosched.cluster.max-queue-bytes=1KB",
            "gosched.cluster.ack-wait=soon"})
    void badValuesFailTheStartNamingTheProperty(String property) {
        String key = property.substring(0, property.indexOf('='));
        runner.withPropertyValues(key.endsWith(".url") ? property : "gosched.cluster.nats.url=nats://127.0.0.1:1")
                .withPropertyValues(property)
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    String name = key.substring(key.lastIndexOf('.') + 1);
                    String messages = messages(ctx.getStartupFailure());
                    assertThat(messages.replace("-", "")).containsIgnoringCase(name.replace("-", ""));
                    assertThat(messages).as("refused before any connection attempt").doesNotContain("cannot reach NATS");
                });
    }

    static String messages(Throwable failure) {
        StringBuilder messages = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        return messages.toString();
    }

    @Test
    void anUnreachableServerFailsTheStartNamingTheUrlWithinTheConnectTimeout() {
        long t0 = System.nanoTime();
        runner.withPropertyValues("gosched.cluster.nats.url=nats://127.0.0.1:1", "gosched.cluster.connect-timeout=1s").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(messages(ctx.getStartupFailure())).contains("gosched.cluster.nats.url: cannot reach NATS at nats://127.0.0.1:1");
        });
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void withTheUrlTheNodeStartsWithTheDefaultsAndSetsUpNats() throws Exception {
        try (NatsServer nats = NatsServer.start(dir)) {
            runner.withPropertyValues("gosched.cluster.nats.url=" + nats.url()).run(ctx -> {
                assertThat(ctx).hasNotFailed();
                ClusterProperties p = ctx.getBean(ClusterProperties.class);
                assertThat(p.ackWait()).isEqualTo(Duration.ofSeconds(30));
                assertThat(p.maxDeliver()).isEqualTo(5);
                assertThat(p.replicas()).isEqualTo(1);
                assertThat(p.nodeId()).as("host name and pid").matches("[a-z0-9_-]+-" + ProcessHandle.current().pid());
                assertThat(ctx).hasSingleBean(NatsJobQueue.class).hasSingleBean(NatsJobStore.class)
                        .hasSingleBean(NatsChannelDirectory.class).hasSingleBean(ClusterNodes.class);
                try (Connection nc = Nats.connect(nats.url())) {
                    var jsm = nc.jetStreamManagement();
                    var stream = jsm.getStreamInfo(ClusterLayout.JOBS_STREAM).getConfiguration();
                    assertThat(stream.getRetentionPolicy().name()).isEqualTo("WorkQueue");
                    assertThat(stream.getStorageType().name()).isEqualTo("File");
                    assertThat(stream.getDiscardPolicy().name()).isEqualTo("New");
                    assertThat(stream.getMaxBytes()).isEqualTo(256L * 1024 * 1024);
                    var consumer = jsm.getConsumerInfo(ClusterLayout.JOBS_STREAM, ClusterLayout.readyConsumer(9)).getConsumerConfiguration();
                    assertThat(consumer.getAckWait()).isEqualTo(Duration.ofSeconds(30));
                    assertThat(consumer.getMaxDeliver()).isEqualTo(5);
                    assertThat(nc.keyValueManagement().getBucketNames()).contains(ClusterLayout.JOBS_BUCKET, ClusterLayout.IDEM_BUCKET,
                            ClusterLayout.CHANNELS_BUCKET, ClusterLayout.NODES_BUCKET);
                }
            });
        }
    }

    @Test
    void aBodyLimitNatsCannotCarryFailsTheStartNamingIt() throws Exception {
        try (NatsServer nats = NatsServer.start(dir)) {
            runner.withPropertyValues("gosched.cluster.nats.url=" + nats.url(), "gosched.api.limits.max-body-bytes=4194304").run(ctx -> {
                assertThat(ctx).hasFailed();
                assertThat(messages(ctx.getStartupFailure())).contains("gosched.api.limits.max-body-bytes (4194304)");
            });
        }
    }

    @Test
    void twoProcessesWithOneNodeIdAreRefused() throws Exception {
        try (NatsServer nats = NatsServer.start(dir)) {
            var p = new ClusterProperties(new ClusterProperties.Nats(nats.url()), "same", Duration.ofSeconds(1), 3, 1,
                    Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ofMillis(500),
                    org.springframework.util.unit.DataSize.ofMegabytes(64), org.springframework.util.unit.DataSize.ofMegabytes(64), true);
            try (ClusterConnection c1 = ClusterConnection.connect(p); ClusterNodes first = ClusterNodes.start(c1);
                    ClusterConnection c2 = ClusterConnection.connect(p)) {
                assertThat(first.self().node()).isEqualTo("same");
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> ClusterNodes.start(c2))
                        .hasMessageContaining("gosched.cluster.node-id").hasMessageContaining("'same' is in use");
            }
        }
    }
}
