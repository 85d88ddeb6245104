package io.gosched.cluster.channel;

import java.time.Duration;

import io.gosched.service.channel.ChannelRegistry;
import io.gosched.service.channel.ChannelSelect;
import io.gosched.cluster.ClusterProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.env.Environment;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Named channels in cluster mode: the node's channels ({@link ChannelRegistry}, the home's
 * {@code LocalChannels}) are served to the other nodes by the forwarder, once every bean is made
 * and before the HTTP server takes requests; at shutdown, the operations this node forwarded to
 * other nodes' channels wait through the web server's drain and are answered before it ends
 * ({@link ForwardedCallsDrain}).
 */
@Configuration(proxyBeanMethods = false)
public class ClusterChannelConfiguration {

    private static final Log log = LogFactory.getLog(ClusterChannelConfiguration.class);

    @Bean
    SmartInitializingSingleton goschedChannelHome(NatsChannelForwarder forwarder, NatsChannelDirectory directory,
            ObjectProvider<ChannelRegistry> channels, ObjectProvider<ChannelSelect> selects) {
        return () -> {
            ChannelRegistry registry = channels.getIfAvailable();
            if (registry == null) {
                log.warn("cluster mode: no ChannelRegistry in this application; node " + directory.localNode()
                        + " serves no channels to the others");
                return;
            }
            selects.ifAvailable(forwarder::serveSelects); // before serve: a select may arrive with the first request
            forwarder.serve(registry);
        };
    }

    @Bean
    ForwardedCallsDrain goschedForwardedCallsDrain(NatsChannelForwarder forwarder, ClusterProperties cluster,
            Environment env) {
        Binder b = Binder.get(env);
        Duration phase = b.bind("spring.lifecycle.timeout-per-shutdown-phase", Duration.class)
                .orElse(Duration.ofSeconds(30)); // Boot's default
        boolean graceful = !"immediate".equalsIgnoreCase(b.bind("server.shutdown", String.class).orElse("graceful"));
        return new ForwardedCallsDrain(forwarder, phase, graceful, cluster.forwardMargin());
    }
}
