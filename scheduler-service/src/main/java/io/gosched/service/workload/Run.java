package io.gosched.service.workload;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.gosched.service.budget.ByteShare;
import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.JsonSize;
import io.gosched.context.CancelContext;
import io.gosched.runtime.Chan;
import io.gosched.service.job.spi.JobRecord;
import tools.jackson.databind.JsonNode;

/**
 * What one run (attempt) of a job shares between its goroutines: the context every step
 * observes, the channels its steps name (and, for the named channels it shares with HTTP
 * clients, their shares of the memory budget), its counters, and the first failure.
 *
 * <p>Thread-safe: goroutines of the run update it from any M.
 */
public final class Run {

    /**
     * A failure of one step, naming the step by its JSON pointer.
     *
     * @param retryable  whether the job's retry policy may try again; false for a failure no
     *                   attempt would change (a target's 4xx answer)
     * @param notBefore  the earliest the next attempt may start (a target's Retry-After), or null
     */
    public record Failure(String pointer, String detail, boolean retryable, java.time.Instant notBefore) {

        public Failure(String pointer, String detail) {
            this(pointer, detail, true, null);
        }
    }

    private final CancelContext context;
    private final Map<String, Chan<Object>> channels;
    private final Map<String, ByteShare> shares;
    /** {@link JsonSize} of each literal this run sent on a named channel, by identity: a loop sends the same node again. */
    private final Map<JsonNode, Long> literalSizes = Collections.synchronizedMap(new IdentityHashMap<>());

    final AtomicLong goroutinesSpawned = new AtomicLong();
    final AtomicLong messagesSent = new AtomicLong();
    final AtomicLong messagesReceived = new AtomicLong();
    final AtomicLong stepsRun = new AtomicLong();
    /** Goroutines of this run not yet ended, the main one included. Zero once {@link Interpreter#run} returns. */
    final AtomicInteger live = new AtomicInteger();
    final AtomicReference<JsonNode> lastReceived = new AtomicReference<>();
    private final AtomicReference<Failure> failure = new AtomicReference<>();
    /** The job and attempt this run is, for the tasks that tell a target ({@link Task.Call}); null in a bare interpreter run. */
    private volatile String jobId;
    private volatile int attempt;
    /**
     * What the attempt last said of its progress ({@link Task.Call#progress}), or null: one
     * bounded report, replaced by the next, so a run holds at most one whatever it reports.
     */
    private final AtomicReference<JobRecord.Report> report = new AtomicReference<>();
    /** The results of the jobs the workload's {@code result} steps name, read when the attempt was claimed. */
    private volatile Map<String, JsonNode> results = Map.of();

    /**
     * @param context   cancelled by DELETE, by the deadline, or by the run itself on its first failure
     * @param channels  every channel name the workload uses, resolved before the run starts
     */
    public Run(CancelContext context, Map<String, Chan<Object>> channels) {
        this(context, channels, Map.of());
    }

    /**
     * @param shares  the budget shares of the named channels among {@code channels}: values sent on
     *                them travel as {@link HeldValue}s charged to the share
     */
    public Run(CancelContext context, Map<String, Chan<Object>> channels, Map<String, ByteShare> shares) {
        this.context = context;
        this.channels = Map.copyOf(channels);
        this.shares = Map.copyOf(shares);
    }

    /** Sets the results {@code result} steps take: job id to that job's result (a JSON null when it received nothing). */
    public void results(Map<String, JsonNode> results) {
        this.results = Map.copyOf(results);
    }

    /** The result of job {@code id}, or null when it was not read (gone by the claim). */
    JsonNode result(String id) {
        return results.get(id);
    }

    /** Names the job and attempt this run is: what a {@link Task} tells its target. */
    public void job(String id, int attemptNumber) {
        this.jobId = id;
        this.attempt = attemptNumber;
    }

    String jobId() {
        return jobId;
    }

    int attempt() {
        return attempt;
    }

    public CancelContext context() {
        return context;
    }

    Chan<Object> channel(String name) {
        Chan<Object> ch = channels.get(name);
        if (ch == null) {
            // The parser collected every name and the job service resolved them all: a miss is a bug here.
            throw new IllegalStateException("channel '" + name + "' was not resolved before the run");
        }
        return ch;
    }

    /**
     * The element a send of {@code value} on {@code channel} puts into it: the literal itself on
     * the run's own channel (the request pays for it), a {@link HeldValue} charged to the share
     * on a named one, or null while that share or the budget has no room.
     */
    Object offer(String channel, JsonNode value) {
        ByteShare share = shares.get(channel);
        if (share == null) {
            return value;
        }
        long bytes = literalSizes.computeIfAbsent(value, JsonSize::of);
        return HeldValue.tryOffer(share, value, bytes);
    }

    /**
     * A channel closed at the next release of budget bytes. Take it before trying again to
     * {@link #offer}, then wait on it: a release in between is not missed.
     */
    Chan<Object> budgetFreed() {
        Chan<Object> freed = Chan.make();
        shares.values().iterator().next().budget().whenFreed(freed::close);
        return freed;
    }

    /**
     * Records {@code f} if it is the run's first failure and cancels the run's context, so that
     * every other goroutine of the run ends too (errgroup semantics).
     */
    public void fail(Failure f) {
        failure.compareAndSet(null, f);
        context.cancel();
    }

    public Failure failure() {
        return failure.get();
    }

    public long goroutinesSpawned() {
        return goroutinesSpawned.get();
    }

    public long messagesSent() {
        return messagesSent.get();
    }

    public long messagesReceived() {
        return messagesReceived.get();
    }

    public long stepsRun() {
        return stepsRun.get();
    }

    public int liveGoroutines() {
        return live.get();
    }

    /** Records {@code r} as the attempt's progress, replacing the one before (the last wins). */
    public void report(JobRecord.Report r) {
        report.set(r);
    }

    /** The attempt's last progress report, or null if it made none. */
    public JobRecord.Report report() {
        return report.get();
    }

    public JsonNode lastReceived() {
        return lastReceived.get();
    }
}
