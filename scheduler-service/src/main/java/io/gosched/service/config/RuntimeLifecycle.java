package io.gosched.service.config;

import io.gosched.service.runtime.RuntimeProperties;

import java.time.Duration;

import io.gosched.service.channel.ChannelService;
import io.gosched.service.job.JobService;
import io.gosched.runtime.GoRuntime;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.ContextClosedEvent;

/**
 * Shutdown in the order the service promises:
 * <ol>
 * <li>{@link ContextClosedEvent} (published before any lifecycle stops): refuse new jobs (503),
 *     end job SSE streams, answer pending HTTP channel calls ("shutdown"), so that the web
 *     server's graceful drain has nothing left that waits;</li>
 * <li>the web server drains (phase {@code DEFAULT_PHASE - 1024} in Boot);</li>
 * <li>this lifecycle ({@link #PHASE}, lower, so it stops later): cancel queued and running jobs,
 *     wait for their goroutines, then shut the runtime down.</li>
 * </ol>
 */
public class RuntimeLifecycle implements SmartLifecycle, ApplicationListener<ContextClosedEvent>, DisposableBean {

    /** Below Boot's graceful-shutdown phase and above the web server's stop phase. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1536;

    private static final Log log = LogFactory.getLog(RuntimeLifecycle.class);

    private final GoRuntime runtime;
    private final JobService jobs;
    private final ChannelService channels;
    private final Duration timeout;
    private volatile boolean running;

    public RuntimeLifecycle(GoRuntime runtime, JobService jobs, ChannelService channels, RuntimeProperties properties) {
        this.runtime = runtime;
        this.jobs = jobs;
        this.channels = channels;
        this.timeout = properties.shutdownTimeout();
    }

    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        jobs.beginShutdown();
        channels.beginShutdown();
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        stopRuntime();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /**
     * A runtime that has been shut down cannot start again, so a paused context (Spring's test
     * context cache pauses contexts it is not using) must leave it running rather than stop it.
     */
    @Override
    public boolean isPauseable() {
        return false;
    }

    /** If the context never started (or failed), the runtime still has threads to stop. */
    @Override
    public void destroy() {
        stopRuntime();
    }

    private void stopRuntime() {
        if (runtime.isShutdown()) {
            return;
        }
        try {
            if (!jobs.cancelAll(timeout)) {
                log.warn("jobs still running after " + timeout + "; shutting the runtime down anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!runtime.shutdown(timeout)) {
            log.warn("goroutines still alive after " + timeout + " at runtime shutdown");
        }
    }
}
