package io.gosched.service.testing;

import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelRegistry;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.channel.SoleNodeChannels;
import io.gosched.service.metrics.ServiceMetrics;

/** Named channels of a node alone, as the service's auto-configuration makes them, for tests without a context. */
public final class TestChannels {

    private TestChannels() {}

    /** The channels of a node alone, with a shutdown state of their own. */
    public static ChannelService soleNode(ServiceProperties properties, ServiceMetrics metrics, ServiceBudget budget) {
        return soleNode(properties, metrics, budget, new ServiceShutdown());
    }

    /** The channels of a node alone, sharing {@code shutdown} (with the node's job service). */
    public static ChannelService soleNode(ServiceProperties properties, ServiceMetrics metrics, ServiceBudget budget,
            ServiceShutdown shutdown) {
        SoleNodeChannels sole = new SoleNodeChannels();
        return new ChannelService(new ChannelRegistry(properties, metrics, budget, sole, shutdown), sole, sole, metrics, budget, shutdown);
    }
}
