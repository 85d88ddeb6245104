package io.gosched.service.config;

import java.time.Clock;
import java.time.Duration;

import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.SoleNodeChannels;
import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelForwarder;
import io.gosched.service.job.JobSpecs;
import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.memory.SoleNode;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.metrics.ServiceMetrics;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The embedded mode, as beans: the job queue and job store in this process's memory, the one
 * node that runs them, and a channel directory and forwarder that know no other node, each only
 * where no other configuration (cluster mode) made its own. Jobs, their Idempotency-Keys, their
 * results and the named channels live and die with the process.
 */
@Configuration(proxyBeanMethods = false)
public class EmbeddedMode {

    /**
     * Embedded mode's ack wait: a lease is never left to lapse by a live process except by a
     * runner that gives up on it, which the job service does only for an attempt taken over
     * elsewhere (never here); a ticket whose leases lapse {@link #MAX_DELIVER} times is lost, as in
     * a cluster.
     */
    static final Duration ACK_WAIT = Duration.ofSeconds(30);
    static final int MAX_DELIVER = 5;

    @Bean
    @ConditionalOnMissingBean(JobQueue.class)
    public InMemoryJobQueue goschedInMemoryJobQueue() {
        return new InMemoryJobQueue(Clock.systemUTC(), ACK_WAIT, MAX_DELIVER);
    }

    /** Charges its records to the memory budget and keeps the retention bounds itself. */
    @Bean
    @ConditionalOnMissingBean(JobStore.class)
    public InMemoryJobStore goschedInMemoryJobStore(ServiceBudget budget, JobSpecs specs, ServiceProperties properties,
            ServiceMetrics metrics) {
        return new InMemoryJobStore(Clock.systemUTC(), budget.memory(), specs::requestBytes, properties.retention().maxFinishedJobs(),
                properties.retention().maxAge(), metrics::jobsEvicted);
    }

    @Bean
    @ConditionalOnMissingBean(JobNode.class)
    public JobNode goschedSoleNode() {
        return new SoleNode();
    }

    /** Both the channel directory and the forwarder of a node alone (a cluster contributes both). */
    @Bean
    @ConditionalOnMissingBean({ChannelDirectory.class, ChannelForwarder.class})
    public SoleNodeChannels goschedSoleNodeChannels() {
        return new SoleNodeChannels();
    }
}
