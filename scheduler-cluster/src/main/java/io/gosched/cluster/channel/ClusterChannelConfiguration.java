package io.gosched.cluster.channel;

import io.gosched.api.channel.ChannelService;
import io.gosched.api.channel.spi.ChannelDirectory;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Named channels in cluster mode: the node's {@link ChannelService} (which finds the
 * {@link ChannelDirectory} itself) serves its channels to the other nodes, once every bean is
 * made and before the HTTP server takes requests.
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
}
