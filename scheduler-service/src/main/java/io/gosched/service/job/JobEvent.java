package io.gosched.service.job;

/**
 * One event of a job's stream ({@link JobService#events}): its view as it stands, why it was sent,
 * and its number in the stream (from 1).
 *
 * @param kind  {@code state} on a change of state or attempt, {@code progress} when only the counters or the reported progress moved
 */
public record JobEvent(long seq, Kind kind, JobView job) {

    /** Why an event was sent. */
    public enum Kind {
        /** The state or the attempt changed (the first event of a stream is one). */
        STATE,
        /** Only the counters or the job's reported progress moved. */
        PROGRESS;

        /** The event's name on the wire: {@code state}, {@code progress}. */
        public String json() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
