package io.gosched.cluster.channel;

import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;

/**
 * Graceful shutdown of a node for the channel operations it forwarded to other nodes: they keep
 * waiting while the web server drains, because their channels live on; when the drain is about to
 * end, those still waiting are withdrawn at their homes and answered with their true outcome
 * ({@link NatsChannelForwarder#withdrawForwarded()}), so that the server can still write the
 * answers and nothing is cut off.
 *
 * <p>Stops in the web server's graceful-shutdown phase (Boot's
 * {@code WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE}), alongside the drain: Spring
 * stops the lifecycles of one phase at once and waits up to
 * {@code spring.lifecycle.timeout-per-shutdown-phase} for all of them. This one withdraws
 * {@code 2 x forward-margin} before that time is up (a withdrawal is one round trip of at most a
 * margin), and at once with {@code server.shutdown=immediate}, where nothing waits for requests.
 * The connection to NATS closes later, with the beans.
 */
final class ForwardedCallsDrain implements SmartLifecycle {

    /** Boot's {@code WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE} (not on this module's class path). */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

    private static final Log log = LogFactory.getLog(ForwardedCallsDrain.class);

    private final NatsChannelForwarder forwarder;
    private final Duration waitBeforeWithdrawal;
    private final Duration margin;
    private volatile boolean running;

    /**
     * @param phaseTimeout  {@code spring.lifecycle.timeout-per-shutdown-phase}
     * @param graceful      false with {@code server.shutdown=immediate}
     * @param margin        {@code gosched.cluster.forward-margin}
     */
    ForwardedCallsDrain(NatsChannelForwarder forwarder, Duration phaseTimeout, boolean graceful, Duration margin) {
        this.forwarder = forwarder;
        this.margin = margin;
        Duration w = phaseTimeout.minus(margin.multipliedBy(2));
        this.waitBeforeWithdrawal = !graceful || w.isNegative() ? Duration.ZERO : w;
    }

    Duration waitBeforeWithdrawal() {
        return waitBeforeWithdrawal;
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        drain();
        running = false;
    }

    /** Runs the drain on a thread of its own, so the web server's drain in this phase runs at the same time. */
    @Override
    public void stop(Runnable callback) {
        Thread.ofPlatform().name("gosched-chan-drain").daemon(true).start(() -> {
            try {
                drain();
            } finally {
                running = false;
                callback.run();
            }
        });
    }

    private void drain() {
        try {
            if (forwarder.awaitForwarded(waitBeforeWithdrawal)) {
                return;
            }
            log.info("cluster mode: withdrawing " + forwarder.forwardedInFlight() + " forwarded channel operations still waiting at shutdown");
            forwarder.withdrawForwarded();
            if (!forwarder.awaitForwarded(margin.multipliedBy(2))) {
                log.warn("cluster mode: " + forwarder.forwardedInFlight() + " forwarded channel operations still without an outcome");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
