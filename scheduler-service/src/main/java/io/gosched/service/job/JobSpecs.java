package io.gosched.service.job;

import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;

import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.handler.JobHandlers;
import io.gosched.service.http.HttpJobs;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import tools.jackson.databind.JsonNode;

/**
 * Job requests as specs: the one parser of job bodies ({@link JobSpecParser}, which is where a
 * new kind of job plugs in), and the specs of the jobs queued on a node whose store is its own
 * memory, kept from submission to claim so that no job is parsed twice however deep the queue.
 *
 * <p>What the kept specs hold is what the in-memory store's charge for a request estimates
 * ({@link JobMemory#requestBytes}: the parsed request; the store charges its JSON text on top),
 * so together they stay within the budget. Where the store is shared, another node may claim the
 * job: nothing is kept ({@link #remember} is not called). Thread-safe.
 */
public final class JobSpecs {

    /** A kept spec and its request's bytes, worked out once at submission. */
    private record Kept(JobSpec spec, long requestBytes) {}

    /** Every handler job must have its handler here: embedded mode, and the parse of a job this node is about to run. */
    private final JobSpecParser parser;
    /** A handler job may be for another node ({@link HandlersElsewhere}): submissions and reads in a cluster. */
    private final JobSpecParser elsewhere;
    private final JobHandlers handlers;
    /** Set once, before any job is submitted, when the job store is shared (cluster mode). */
    private volatile boolean shared;
    private final ConcurrentHashMap<String, Kept> kept = new ConcurrentHashMap<>();

    /** Job bodies of the built-in kinds, with HTTP-target jobs switched off. */
    public JobSpecs(WorkloadParser workloads, WorkloadTemplates templates) {
        this(workloads, templates, HttpJobs.off());
    }

    /** @param http  HTTP-target jobs: what they may call, and their caller */
    public JobSpecs(WorkloadParser workloads, WorkloadTemplates templates, HttpJobs http) {
        this(workloads, templates, http, JobHandlers.NONE);
    }

    /**
     * @param http      HTTP-target jobs: what they may call, and their caller
     * @param handlers  the application's job handlers on this node
     */
    public JobSpecs(WorkloadParser workloads, WorkloadTemplates templates, HttpJobs http, JobHandlers handlers) {
        this.parser = new JobSpecParser(workloads, templates, http, handlers);
        this.elsewhere = new JobSpecParser(workloads, templates, http, new HandlersElsewhere(handlers));
        this.handlers = handlers;
    }

    /**
     * The job store is shared with other nodes, which may have handlers this one lacks: from now
     * on a handler job for another node is accepted ({@link HandlersElsewhere}). Called by the
     * job service at its construction.
     */
    void shared() {
        shared = true;
    }

    /** True if this node can run jobs of handler {@code handler}. */
    boolean hasHandler(String handler) {
        return handlers.names().contains(handler);
    }

    /** True if this node can run the job of {@code spec}: it needs no handler, or one this node has. */
    boolean runsHere(JobRecord.Spec spec) {
        String h = spec.handler();
        return h == null || hasHandler(h);
    }

    /** The application's job handlers on this node. */
    public JobHandlers handlers() {
        return handlers;
    }

    /**
     * A submission's body as a spec.
     *
     * @throws io.gosched.service.error.InvalidRequestException listing every violation
     */
    JobSpec parse(JsonNode body, Instant now) {
        return (shared ? elsewhere : parser).parse(body, now);
    }

    /**
     * The spec of a stored request, parsed again with its submission time as "now", for what it
     * says besides its work (retry policy, channels): in a cluster a handler job may be another
     * node's, and then its arguments are not read here.
     */
    JobSpec parse(JobRecord.Spec stored) {
        return (shared ? elsewhere : parser).parse(stored.request(), stored.submittedAt());
    }

    /**
     * The spec of a stored request to run here: a handler job's arguments are bound by this
     * node's handler ({@link #runsHere} was checked).
     *
     * @throws io.gosched.service.error.InvalidRequestException if this node cannot run it as it stands
     */
    JobSpec parseToRun(JobRecord.Spec stored) {
        return parser.parse(stored.request(), stored.submittedAt());
    }

    /** Keeps job {@code id}'s spec until it is claimed or forgotten; before its record is stored, which sizes it from here. */
    void remember(String id, JobSpec spec, long requestBytes) {
        kept.put(id, new Kept(spec, requestBytes));
    }

    /** True if job {@code id}'s spec is kept here. */
    boolean holds(String id) {
        return kept.containsKey(id);
    }

    /** Job {@code id}'s kept spec, no longer kept (its claim); null if none. */
    JobSpec take(String id) {
        Kept k = kept.remove(id);
        return k == null ? null : k.spec();
    }

    /** Job {@code id} will not be claimed here (cancelled, stale, lost, or never stored). */
    void forget(String id) {
        kept.remove(id);
    }

    /**
     * What a record's request weighs in the memory budget ({@link JobMemory#requestBytes}): the
     * in-memory store's charge. A record being submitted here is sized already (see
     * {@link #remember}); another one is parsed for it.
     */
    public long requestBytes(JobRecord r) {
        Kept k = kept.get(r.id());
        if (k != null) {
            return k.requestBytes();
        }
        return r.spec().request() == null ? JobMemory.JOB_BYTES : JobMemory.requestBytes(parse(r.spec()));
    }
}
