package io.gosched.cluster.channel;

import java.time.Duration;

import io.gosched.service.channel.ChannelService;
import io.gosched.service.channel.spi.ChannelDirectory;
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
 * Named channels in cluster mode: the node's {@link ChannelService} (which finds the
 * {@link ChannelDirectory} itself) serves its channels to the other nodes, once every bean is
 * made and before the HTTP server takes requests; at shutdown, the operations this node forwarded
 * to other nodes' channels wait through the web server's drain and are answered before it ends
 * ({@link ForwardedCallsDrain}).
 */
@Configuration(proxyBeanMethods = false)
public class ClusterChannelConfiguration {

    private static final Log log = LogFactory.getLog(ClusterChannelConfiguration.class);

    @Bean
    SmartInitializingSingleton goschedChannelHome(ChannelDirectory directory, ObjectProvider<ChannelService> channels) {
        return () -> {
            ChannelService service = channels.getIfAvailable();
            if (service == null) {
                log.warn("cluster mode: no ChannelService in this application; node " + directory.localNode()
                        + " serves no channels to the others");
                return;
            }
            directory.serve(new ChannelServiceChannels(service));
        };
    }

    @Bean
    ForwardedCallsDrain goschedForwardedCallsDrain(NatsChannelDirectory directory, ClusterProperties cluster,
            Environment env) {
        Binder b = Binder.get(env);
        Duration phase = b.bind("spring.lifecycle.timeout-per-shutdown-phase", Duration.class)
                .orElse(Duration.ofSeconds(30)); // Boot's default
        boolean graceful = !"immediate".equalsIgnoreCase(b.bind("server.shutdown", String.class).orElse("graceful"));
        return new ForwardedCallsDrain(directory, phase, graceful, cluster.forwardMargin());
    }
}
