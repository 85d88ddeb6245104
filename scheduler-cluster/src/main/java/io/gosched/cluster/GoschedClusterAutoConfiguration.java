package io.gosched.cluster;

import java.time.Clock;
import java.util.Set;

import io.gosched.service.ServiceProperties;
import io.gosched.service.handler.JobHandlers;
import io.gosched.service.job.spi.JobNode;
import io.gosched.cluster.channel.ClusterChannelConfiguration;
import io.gosched.cluster.channel.NatsChannelDirectory;
import io.gosched.cluster.channel.NatsChannelForwarder;
import io.gosched.cluster.job.NatsJobQueue;
import io.gosched.cluster.job.NatsJobStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * Cluster mode: active only when {@code gosched.cluster.nats.url} is set; without it nothing of
 * this module runs, connects or registers, and the service is the embedded single node.
 *
 * <p>Provides the NATS implementations of the job queue, job store, channel directory and channel forwarder ports,
 * the node's heartbeat, the cluster meters and, where Boot's health support is present, the
 * health component {@code nats}. Every meter of the application gets the tag {@code node}
 * through {@link ClusterEnvironment}.
 * Runs before the service's auto-configuration so that its in-memory defaults back off.
 */
@AutoConfiguration(beforeName = "io.gosched.service.config.GoschedServiceAutoConfiguration")
@Conditional(GoschedClusterAutoConfiguration.OnNatsUrl.class)
@EnableConfigurationProperties(ClusterProperties.class)
@Import(ClusterChannelConfiguration.class)
public class GoschedClusterAutoConfiguration {

    /**
     * Cluster mode is on when {@code gosched.cluster.nats.url} has a value. An empty one (what
     * {@code GOSCHED_CLUSTER_NATS_URL=} or {@code ${NATS_URL:}} in a compose file gives) means
     * off, as unset does, not a bad URL.
     */
    static final class OnNatsUrl implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return StringUtils.hasText(context.getEnvironment().getProperty("gosched.cluster.nats.url"));
        }
    }

    private static final Log log = LogFactory.getLog(GoschedClusterAutoConfiguration.class);
    /** What a job record adds to its request body in a KV value: the status, JSON-encoded. */
    static final int RECORD_OVERHEAD = 8 * 1024;

    @Bean(destroyMethod = "close")
    public ClusterConnection goschedClusterConnection(ClusterProperties properties, ObjectProvider<ServiceProperties> api) {
        ClusterConnection c = ClusterConnection.connect(properties);
        ServiceProperties a = api.getIfAvailable();
        long maxPayload = c.nats().getServerInfo().getMaxPayload();
        if (a != null && a.limits().maxBodyBytes() + RECORD_OVERHEAD > maxPayload) {
            c.close();
            throw new IllegalStateException("gosched.api.limits.max-body-bytes (" + a.limits().maxBodyBytes()
                    + ") is more than NATS at " + properties.nats().url() + " carries in one message with a job record around it ("
                    + maxPayload + " bytes, the server's max_payload): lower it below " + (maxPayload - RECORD_OVERHEAD)
                    + " or raise max_payload");
        }
        return c;
    }

    @Bean
    public ClusterMetrics goschedClusterMetrics(ObjectProvider<MeterRegistry> registry, ClusterConnection conn) {
        ClusterMetrics m = new ClusterMetrics(registry.getIfAvailable(), conn.nodeId());
        m.connection(conn);
        return m;
    }

    /**
     * The node's heartbeat, advertising the application's job handlers this node has (a {@link JobHandlers} bean's), if any.
     * An intake node advertises none: it claims no shared job, so a handler only it has must show as missing, not present.
     */
    @Bean(destroyMethod = "close")
    public ClusterNodes goschedClusterNodes(ClusterConnection conn, ObjectProvider<JobHandlers> handlers) {
        JobHandlers own = handlers.getIfAvailable(() -> JobHandlers.NONE); // here, not on the heartbeat thread while the context starts
        return ClusterNodes.start(conn, conn.properties().runJobs() ? own::names : Set::of);
    }

    @Bean(destroyMethod = "close")
    public NatsJobQueue goschedJobQueue(ClusterConnection conn, ClusterMetrics metrics) {
        return NatsJobQueue.start(conn, metrics, Clock.systemUTC());
    }

    @Bean(destroyMethod = "close")
    public NatsJobStore goschedJobStore(ClusterConnection conn) {
        return NatsJobStore.start(conn);
    }

    @Bean(destroyMethod = "close")
    public NatsChannelDirectory goschedChannelDirectory(ClusterConnection conn, ClusterNodes nodes) {
        return NatsChannelDirectory.start(conn, nodes);
    }

    /** Closed before the directory (it depends on it): its forwarded calls are answered before the index stops. */
    @Bean(destroyMethod = "close")
    public NatsChannelForwarder goschedChannelForwarder(ClusterConnection conn, NatsChannelDirectory directory) {
        return new NatsChannelForwarder(conn, directory);
    }

    /** Schedules in a KV bucket, so that every node fires them and each tick is decided once. */
    @Bean(destroyMethod = "close")
    public io.gosched.cluster.schedule.NatsScheduleStore goschedScheduleStore(ClusterConnection conn) {
        return io.gosched.cluster.schedule.NatsScheduleStore.start(conn);
    }

    /** This node as the job service sees it: its id, and whether it leads (runs retention). */
    @Bean
    public JobNode goschedJobNode(ClusterConnection conn, ClusterNodes nodes) {
        return new JobNode() {
            @Override
            public String id() {
                return conn.nodeId();
            }

            @Override
            public boolean isLeader() {
                return nodes.isLeader();
            }

            @Override
            public boolean isPresent(String nodeId) {
                return nodes.info(nodeId).isPresent();
            }

            @Override
            public boolean hasHandlerSomewhere(String handler) {
                return nodes.hasHandler(handler);
            }
        };
    }

    /** Says at start-up what this node is and where its jobs live. */
    @Bean
    public SmartInitializingSingleton goschedClusterStartupReport(ClusterConnection conn) {
        return () -> log.info("cluster mode: node " + conn.nodeId() + " queues, stores and runs jobs and shares its named channels on NATS "
                + conn.properties().nats().url());
    }

    /** The health component {@code nats}: DOWN while the node is cut off from NATS (it reconnects by itself). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class NatsHealth {

        @Bean
        HealthIndicator natsHealthIndicator(ClusterConnection conn) {
            return () -> {
                Health.Builder b = conn.isUp() ? Health.up() : Health.down();
                return b.withDetail("node", conn.nodeId()).withDetail("state", conn.state().name().toLowerCase())
                        .withDetail("since", conn.stateSince().toString()).withDetail("reconnects", conn.reconnects()).build();
            };
        }
    }
}
