package io.gosched.cluster;

import java.util.HashMap;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * In cluster mode only (the URL is set): fixes this process's node id once, as the default of
 * {@code gosched.cluster.node-id}, and makes it the common metric tag {@code node}
 * ({@code management.metrics.tags.node}). Through that one property Micrometer tags every meter,
 * and scheduler-web's latency histogram, which is not a Micrometer meter, reads the same tags.
 * Either property set by the user wins; both are defaults, added last.
 */
public final class ClusterEnvironment implements EnvironmentPostProcessor, Ordered {

    static final String SOURCE = "goschedClusterDefaults";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        String url = env.getProperty("gosched.cluster.nats.url");
        if (url == null || url.isBlank()) {
            return;
        }
        Map<String, Object> defaults = new HashMap<>();
        String node = env.getProperty("gosched.cluster.node-id");
        if (node == null || node.isBlank()) {
            node = ClusterProperties.defaultNodeId();
            defaults.put("gosched.cluster.node-id", node);
        }
        if (env.getProperty("management.metrics.tags.node") == null) {
            defaults.put("management.metrics.tags.node", node);
        }
        if (!defaults.isEmpty()) {
            env.getPropertySources().addLast(new MapPropertySource(SOURCE, defaults));
        }
    }

    /** After the application's own configuration files are loaded. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
