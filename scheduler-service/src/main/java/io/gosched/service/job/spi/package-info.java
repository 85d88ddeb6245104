/**
 * The parts of the job service a cluster replaces: where waiting jobs queue, where job records
 * live, and the claim a runner holds on a job while it runs it.
 *
 * <h2>The ports</h2>
 * <ul>
 * <li>{@link io.gosched.service.job.spi.JobQueue}: intake of {@link io.gosched.service.job.spi.JobTicket}s
 *     (priority 0–9, {@code notBefore}, optionally pinned to one node), and pulls of only as many
 *     ready tickets as the caller's admission has room for, highest priority first;</li>
 * <li>{@link io.gosched.service.job.spi.JobLease}: what a pull hands the runner for one ticket:
 *     complete (ack), release with a delay (nak), kept alive by the queue itself;</li>
 * <li>{@link io.gosched.service.job.spi.JobStore}: {@link io.gosched.service.job.spi.JobRecord}s with
 *     compare-and-set by revision, the idempotency index, removal for retention, and watches;</li>
 * </ul>
 * The embedded default implements them in memory on one node; {@code scheduler-cluster}
 * implements them on NATS JetStream. The HTTP behaviour of the service is the same over both.
 *
 * <h2>The protocol the job service runs over them</h2>
 * The ports are deliberately dumb: the state machine ({@link io.gosched.service.job.JobState}) stays in
 * the job service, which writes every move with a compare-and-set on the record's revision. The
 * rules that make a queue with at-least-once delivery and a store with CAS behave as one job
 * service (docs/cluster.md, "Protocol"):
 * <ol>
 * <li><b>Submit</b>: claim the Idempotency-Key ({@link io.gosched.service.job.spi.JobStore#claimKey}; a
 *     loser replays the winner's job, or answers 409 for another body), create the record
 *     ({@code queued}, ticket 1), then {@link io.gosched.service.job.spi.JobQueue#enqueue} ticket 1.</li>
 * <li><b>Claim</b>: a pulled lease is run only after a CAS of the record from {@code queued} with
 *     the lease's ticket number to {@code running(node, attempt + 1)}. A record that is final or
 *     carries a newer ticket makes the lease stale: complete it and drop it. A record already
 *     {@code running} with the same ticket while {@link io.gosched.service.job.spi.JobLease#delivery()}
 *     is above 1 is a takeover: the previous runner's lease lapsed (it died, or stalled past the
 *     ack wait), and the CAS moves the job to the next attempt on this node.</li>
 * <li><b>Fencing</b>: every later write by a runner checks that the record still names its node
 *     and attempt, so a runner whose lease lapsed cannot overwrite its successor.</li>
 * <li><b>Finish</b>: CAS to the final state, then {@link io.gosched.service.job.spi.JobLease#complete}.
 *     A crash in between redelivers a lease whose record is final: stale, dropped.</li>
 * <li><b>Retry</b>: CAS {@code running → queued} with ticket n+1, enqueue ticket n+1 with
 *     {@code notBefore} = now + back-off, then complete lease n. Retries never reuse a lease, so the
 *     queue's delivery count counts only lapsed leases.</li>
 * <li><b>Cancel</b>: a queued job is a CAS to {@code cancelled} (its ticket turns stale, and
 *     {@link io.gosched.service.job.spi.JobQueue#withdraw} frees its queue space); a running one gets
 *     {@code cancelRequested}, which the running node sees through
 *     {@link io.gosched.service.job.spi.JobStore#watch} and turns into a cancelled Context.</li>
 * <li><b>Wait</b>: a job submitted with {@code after} is created {@code waiting} with no ticket. When every job it
 *     names has succeeded, a CAS {@code waiting -> queued} is made by any node that sees it (the watch, a sweep, the
 *     submitter's re-check after its create), and only the node whose CAS landed enqueues ticket 1; when one ended
 *     otherwise, a CAS {@code waiting -> cancelled} names it. A queued record left with no ticket (its releaser died
 *     in between) is given its ticket again by the leader's chores.</li>
 * <li><b>Lost</b>: a ticket delivered {@code max-deliver} times without completion is handed to
 *     the {@link io.gosched.service.job.spi.JobQueue.LostHandler}, which fails the job with reason
 *     {@value io.gosched.service.job.spi.JobRecord.Failure#LOST}.</li>
 * </ol>
 */
package io.gosched.service.job.spi;
