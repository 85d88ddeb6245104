package io.gosched.service.job.spi;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import tools.jackson.databind.JsonNode;

/**
 * A job as the {@link JobStore} keeps it: what was asked ({@link Spec}, never changes) and where
 * it stands ({@link Status}, replaced as a whole by every compare-and-set). Everything a
 * {@code JobView} shows can be rebuilt from it on any node; the live counters of a running
 * attempt come separately, as {@link JobStore.Progress}.
 *
 * @param id      the job's id (a UUID)
 * @param spec    the request as accepted
 * @param status  the state and the record of finished attempts
 */
public record JobRecord(String id, Spec spec, Status status) {

    public JobRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(status, "status");
    }

    /**
     * What was asked, fixed at submission.
     *
     * @param request         the request body as accepted; a runner on any node parses it again
     *                        (with {@code submittedAt} as the parse's "now"), so nodes must share the
     *                        {@code gosched.api.limits}. Null in {@link #summary()}s.
     * @param name            the client's label, or null
     * @param template        the template's name, or null for a literal workload
     * @param priority        0 to 9
     * @param maxAttempts     attempts the retry policy allows in all
     * @param timeoutMs       the deadline of each attempt
     * @param maxGoroutines   what admission reserves for one attempt
     * @param submittedAt     when the job was accepted
     * @param notBefore       earliest start, or null
     * @param idempotencyKey  the Idempotency-Key header, or null
     * @param bodyHash        SHA-256 of the body, for key replays; null without a key
     * @param after           the ids of the jobs it waits for (state {@code waiting} until all succeeded), in the order
     *                        given; null for none (a record written before dependencies existed reads so). Kept in
     *                        {@link #summary()}s: every node's dependency index is built from them
     * @param schedule        the schedule whose tick made the job, or null for a job submitted by a client
     * @param scheduledFor    the tick of {@code schedule} the job is for (its id is derived from both), or null
     * @param kind            {@value #HTTP} for an HTTP-target job, {@code handler:NAME} for a handler's; null for a
     *                        workload or a template (older records read so)
     */
    public record Spec(JsonNode request, String name, String template, int priority, int maxAttempts, long timeoutMs,
            long maxGoroutines, Instant submittedAt, Instant notBefore, String idempotencyKey, String bodyHash, List<String> after,
            String schedule, Instant scheduledFor, String kind) {

        /** The kind of an HTTP-target job. */
        public static final String HTTP = "http";

        /** The kind of a handler job is this and the handler's name. */
        public static final String HANDLER_PREFIX = "handler:";

        /** The handler a job of this kind needs, or null if it is not a handler job. */
        public static String handlerOf(String kind) {
            return kind != null && kind.startsWith(HANDLER_PREFIX) ? kind.substring(HANDLER_PREFIX.length()) : null;
        }

        /** The handler this job needs, or null if it is not a handler job. */
        public String handler() {
            return handlerOf(kind);
        }

        /** A job of a workload or a template. */
        public Spec(JsonNode request, String name, String template, int priority, int maxAttempts, long timeoutMs,
                long maxGoroutines, Instant submittedAt, Instant notBefore, String idempotencyKey, String bodyHash, List<String> after,
                String schedule, Instant scheduledFor) {
            this(request, name, template, priority, maxAttempts, timeoutMs, maxGoroutines, submittedAt, notBefore, idempotencyKey,
                    bodyHash, after, schedule, scheduledFor, null);
        }

        public Spec {
            Objects.requireNonNull(submittedAt, "submittedAt");
            after = after == null || after.isEmpty() ? null : List.copyOf(after);
        }

        /** A client's job without dependencies. */
        public Spec(JsonNode request, String name, String template, int priority, int maxAttempts, long timeoutMs,
                long maxGoroutines, Instant submittedAt, Instant notBefore, String idempotencyKey, String bodyHash) {
            this(request, name, template, priority, maxAttempts, timeoutMs, maxGoroutines, submittedAt, notBefore, idempotencyKey,
                    bodyHash, null, null, null);
        }

        /** A client's job: no schedule. */
        public Spec(JsonNode request, String name, String template, int priority, int maxAttempts, long timeoutMs,
                long maxGoroutines, Instant submittedAt, Instant notBefore, String idempotencyKey, String bodyHash, List<String> after) {
            this(request, name, template, priority, maxAttempts, timeoutMs, maxGoroutines, submittedAt, notBefore, idempotencyKey,
                    bodyHash, after, null, null);
        }

        /** {@link #after}, or an empty list for none. */
        public List<String> dependencies() {
            return after == null ? List.of() : after;
        }

        /** The same spec with another request body (null: a summary's). */
        public Spec withRequest(JsonNode body) {
            return new Spec(body, name, template, priority, maxAttempts, timeoutMs, maxGoroutines, submittedAt, notBefore,
                    idempotencyKey, bodyHash, after, schedule, scheduledFor, kind);
        }
    }

    /**
     * Where the job stands.
     *
     * @param state            see {@link JobState}
     * @param ticket           the number of the one valid {@link JobTicket}; a pulled ticket with
     *                         another number is stale
     * @param attempt          attempts started so far (0 before the first)
     * @param attemptBase      {@code attempt} when the budget was last reset by a manual retry
     * @param node             the node running the job, or the one that ran it last; null before
     * @param cancelRequested  DELETE reached a running job: its node cancels the run's Context
     * @param queuedAt         when it last entered the queue
     * @param startedAt        when the current or last attempt started, or null
     * @param finishedAt       when it reached a final state, or null
     * @param counters         finished attempts' work, added up
     * @param lastReceived     the last value a recv step took, or null if none (a JSON null is a value)
     * @param error            why it failed, or null; null again once it is queued for another attempt
     *                         (the failed attempt keeps it in {@code attempts})
     * @param attempts         the attempts that ended, oldest first, the last {@value #ATTEMPTS_KEPT} of them; a
     *                         record written before attempts were kept reads as none
     * @param progress         what the last attempt that reported progress last reported, written with that
     *                         attempt's end (a running attempt's reports travel as {@link JobStore.Progress}, not
     *                         as writes of the record); cleared when the next attempt is claimed; null when none
     */
    public record Status(JobState state, long ticket, int attempt, int attemptBase, String node, boolean cancelRequested,
            Instant queuedAt, Instant startedAt, Instant finishedAt, Counters counters, JsonNode lastReceived, Failure error,
            List<Attempt> attempts, Report progress) {

        /** A status without a progress report. */
        public Status(JobState state, long ticket, int attempt, int attemptBase, String node, boolean cancelRequested,
                Instant queuedAt, Instant startedAt, Instant finishedAt, Counters counters, JsonNode lastReceived, Failure error,
                List<Attempt> attempts) {
            this(state, ticket, attempt, attemptBase, node, cancelRequested, queuedAt, startedAt, finishedAt, counters, lastReceived,
                    error, attempts, null);
        }

        /** This status with {@code report} as the last progress reported; this one unchanged when {@code report} is null. */
        public Status withProgress(Report report) {
            return report == null ? this : new Status(state, ticket, attempt, attemptBase, node, cancelRequested, queuedAt, startedAt,
                    finishedAt, counters, lastReceived, error, attempts, report);
        }

        /** The most ended attempts a record keeps: manual retries are unbounded, the record is charged to the budget. */
        public static final int ATTEMPTS_KEPT = 20;

        public Status {
            Objects.requireNonNull(state, "state");
            Objects.requireNonNull(counters, "counters");
            attempts = attempts == null ? List.of() : List.copyOf(attempts);
        }

        /** A new job's status: queued under ticket 1. */
        public static Status queued(Instant now) {
            return new Status(JobState.QUEUED, 1, 0, 0, null, false, now, null, null, Counters.ZERO, null, null, List.of());
        }

        /** A new job submitted with {@code after}: waiting, with no ticket in the queue; ticket 1 is the one it gets when released. */
        public static Status waiting() {
            return new Status(JobState.WAITING, 1, 0, 0, null, false, null, null, null, Counters.ZERO, null, null, List.of());
        }

        /** {@code waiting -> queued}: every job it waited for succeeded; its ticket (1) goes into the queue next. */
        public Status released(Instant now) {
            if (state != JobState.WAITING) {
                throw illegal(JobState.QUEUED);
            }
            return new Status(JobState.QUEUED, ticket, attempt, attemptBase, node, false, now, null, null, counters, lastReceived, null,
                    attempts, progress);
        }

        /** {@code attempts} with the running attempt's end appended (only a running job has one to end). */
        private List<Attempt> ended(Instant now, String outcome, Failure failure) {
            if (state != JobState.RUNNING || attempt == 0) {
                return attempts;
            }
            List<Attempt> out = new ArrayList<>(attempts);
            out.add(new Attempt(attempt, node, startedAt, now, outcome, failure));
            return out.size() > ATTEMPTS_KEPT ? out.subList(out.size() - ATTEMPTS_KEPT, out.size()) : out;
        }

        /**
         * {@code queued -> running} on {@code node} as the next attempt, or a takeover
         * ({@code running -> running}) by another node after the first one's lease lapsed.
         */
        public Status claimed(String runner, Instant now) {
            if (state != JobState.QUEUED && state != JobState.RUNNING) {
                throw illegal(JobState.RUNNING);
            }
            return new Status(JobState.RUNNING, ticket, attempt + 1, attemptBase, runner, cancelRequested, queuedAt, now, null,
                    counters, lastReceived, null, attempts);
        }

        /** A final state after an attempt, folding the attempt's counters and outcome in. */
        public Status finished(JobState to, Instant now, Counters attemptCounters, JsonNode received, Failure failure) {
            if (!to.isFinal() || !state.canMoveTo(to)) {
                throw illegal(to);
            }
            return new Status(to, ticket, attempt, attemptBase, node, false, queuedAt, startedAt, now, counters.plus(attemptCounters),
                    received != null ? received : lastReceived, failure, ended(now, to.json(), failure), progress);
        }

        /**
         * Back to the queue under the next ticket: an automatic retry ({@code running}; the attempt
         * that ended is recorded, with {@code failure}, or as {@value Attempt#LOST} without one) or a
         * manual one (final; its last attempt was recorded when it ended). Nothing of the ended
         * attempt stays as if current: no start, no error.
         */
        public Status requeued(Instant now, Counters attemptCounters, JsonNode received, Failure failure, boolean resetBudget) {
            if (!state.canMoveTo(JobState.QUEUED)) {
                throw illegal(JobState.QUEUED);
            }
            String outcome = failure == null ? Attempt.LOST
                    : Failure.TIMEOUT.equals(failure.reason()) ? JobState.TIMED_OUT.json() : JobState.FAILED.json();
            return new Status(JobState.QUEUED, ticket + 1, attempt, resetBudget ? attempt : attemptBase, node, false, now, null,
                    null, counters.plus(attemptCounters), received != null ? received : lastReceived, null, ended(now, outcome, failure),
                    progress);
        }

        /**
         * {@code running -> queued} under the next ticket for a claim that landed but never ran:
         * its node got no answer to the claim's CAS (the store went away mid-write) and handed the
         * ticket back. The attempt it would have been is not counted, so the job's next run is
         * the attempt it would have had.
         */
        public Status unclaimed(Instant now) {
            if (state != JobState.RUNNING || attempt <= attemptBase) {
                throw illegal(JobState.QUEUED);
            }
            int previous = attempt - 1;
            return new Status(JobState.QUEUED, ticket + 1, previous, attemptBase, node, false, now, null,
                    null, counters, lastReceived, null, attempts, progress);
        }

        /**
         * Back to the queue under the next ticket, untouched, by a node that cannot run the job (a
         * handler job whose handler it lacks): a queued job keeps its attempts, its queue time and
         * its place in line; a running one whose lease lapsed (its runner died) has that attempt
         * recorded as {@value Attempt#LOST}, as a takeover would have counted it.
         */
        public Status passedOn(Instant now) {
            if (state == JobState.RUNNING) {
                return requeued(now, null, null, null, false);
            }
            if (state != JobState.QUEUED) {
                throw illegal(JobState.QUEUED);
            }
            return new Status(JobState.QUEUED, ticket + 1, attempt, attemptBase, node, false, queuedAt, null, null, counters,
                    lastReceived, null, attempts, progress);
        }

        /** A running job asked to stop: its node sees this and cancels the run's Context. */
        public Status withCancelRequested() {
            if (state != JobState.RUNNING) {
                throw new IllegalStateException("only a running job can be asked to stop; this one is " + state.json());
            }
            return new Status(state, ticket, attempt, attemptBase, node, true, queuedAt, startedAt, finishedAt, counters, lastReceived,
                    error, attempts, progress);
        }

        /** True if the retry policy allows another automatic attempt. */
        public boolean attemptsLeft(int maxAttempts) {
            return attempt - attemptBase < maxAttempts;
        }

        private IllegalStateException illegal(JobState to) {
            return new IllegalStateException("illegal transition " + state.json() + " -> " + to.json());
        }
    }

    /**
     * One attempt that ended.
     *
     * @param number      its attempt number (1 for the first)
     * @param node        the node that ran it (null in embedded mode's records before a node id was kept)
     * @param startedAt   when it started
     * @param finishedAt  when it ended
     * @param outcome     a final state's wire name ({@code succeeded}, {@code failed}, {@code timed_out},
     *                    {@code cancelled}), or {@value #LOST} when its node stopped answering and no outcome came
     * @param error       why it failed, or null
     */
    public record Attempt(int number, String node, Instant startedAt, Instant finishedAt, String outcome, Failure error) {
        public static final String LOST = "lost";
    }

    /**
     * What a running attempt last said of its progress ({@code JobContext.progress} of a handler).
     *
     * @param fraction  how much is done, 0 to 1; null when unknown
     * @param message   what it is doing, at most {@value #MAX_MESSAGE} characters; null when none
     * @param at        when it was reported
     */
    public record Report(Double fraction, String message, Instant at) {

        /** The longest message kept; a longer one is cut (never inside a surrogate pair). */
        public static final int MAX_MESSAGE = 200;

        public Report {
            Objects.requireNonNull(at, "at");
            if (fraction != null && (fraction.isNaN() || fraction < 0 || fraction > 1)) {
                throw new IllegalArgumentException("fraction must be within 0..1, or null for unknown: " + fraction);
            }
            if (message != null && message.length() > MAX_MESSAGE) {
                int end = Character.isHighSurrogate(message.charAt(MAX_MESSAGE - 1)) ? MAX_MESSAGE - 1 : MAX_MESSAGE;
                message = message.substring(0, end);
            }
        }

        /**
         * A report as a handler makes it: {@code fraction} NaN for unknown, clamped into 0..1 otherwise
         * (a computed 1.0000001 is done, not a failure of the job), {@code message} cut to its bound.
         */
        public static Report of(double fraction, String message, Instant at) {
            return new Report(Double.isNaN(fraction) ? null : Math.min(1.0, Math.max(0.0, fraction)), message, at);
        }
    }

    /** Work done by attempts, added up (the live goroutines of a running attempt come as progress). */
    public record Counters(long goroutinesSpawned, long messagesSent, long messagesReceived, long stepsRun) {

        public static final Counters ZERO = new Counters(0, 0, 0, 0);

        public Counters plus(Counters o) {
            return o == null ? this : new Counters(goroutinesSpawned + o.goroutinesSpawned, messagesSent + o.messagesSent,
                    messagesReceived + o.messagesReceived, stepsRun + o.stepsRun);
        }
    }

    /**
     * Why a job failed.
     *
     * @param reason   {@value #STEP} (a step failed), {@value #TIMEOUT}, {@value #REFUSED} (the runtime
     *                 would not start it), {@value #LOST} (its node died max-deliver times),
     *                 {@value #PANIC} (an exception escaped one of its goroutines) or {@value #DEPENDENCY}
     *                 (a job of its {@code after} ended otherwise than succeeded)
     * @param pointer  the failing step's JSON pointer into the workload ("" for the job as a whole)
     * @param detail   what happened, for people
     */
    public record Failure(String reason, String pointer, String detail) {
        public static final String STEP = "step";
        public static final String TIMEOUT = "timeout";
        public static final String REFUSED = "refused";
        public static final String LOST = "lost";
        public static final String PANIC = "panic";
        /** A job it waited for ({@code after}) ended otherwise than succeeded, or is gone; the pointer is {@code /after/<i>}. */
        public static final String DEPENDENCY = "dependency";

        public Failure {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(pointer, "pointer");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /** The same job without its request body: what list indexes keep. */
    public JobRecord summary() {
        if (spec.request() == null) {
            return this;
        }
        return new JobRecord(id, spec.withRequest(null), status);
    }

    public JobRecord withStatus(Status next) {
        return new JobRecord(id, spec, next);
    }

    /**
     * {@code queued|running -> failed} with reason {@value Failure#LOST}: the dead letter of a job
     * whose runners died {@code deliveries} times. The attempt's counters are lost with it.
     */
    public JobRecord lost(Instant now, int deliveries) {
        Failure f = new Failure(Failure.LOST, "", "lost: the job was delivered " + deliveries
                + " times and no node finished it (each node that took it died or lost the queue); POST /retry runs it again");
        Status s = status;
        return withStatus(new Status(JobState.FAILED, s.ticket(), s.attempt(), s.attemptBase(), s.node(), false, s.queuedAt(),
                s.startedAt(), now, s.counters(), s.lastReceived(), f, s.ended(now, Attempt.LOST, f)));
    }
}
