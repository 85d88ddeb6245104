package io.gosched.service.job;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;

import io.gosched.service.job.JobService;

import io.gosched.testing.Await;
import java.time.Duration;
import java.util.function.Predicate;

/**
 * Waits for a job's view to reach a state, through {@link Await} (polls with pauses, never a busy
 * spin that takes the CPU the job needs), and names the last view seen when it never does.
 */
final class JobAwait {

    private JobAwait() {
    }

    /** The job's view once {@code reached} holds for it, within {@code within}. */
    static JobView view(JobService jobs, String id, String what, Duration within, Predicate<JobView> reached) {
        JobView[] last = new JobView[1];
        try {
            return Await.value("job " + id + " " + what, within, () -> {
                JobView v = jobs.get(id);
                last[0] = v;
                return reached.test(v) ? v : null;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; last seen: " + last[0], e);
        }
    }

    /** The job's view once it is in {@code state}. */
    static JobView state(JobService jobs, String id, JobState state, Duration within) {
        return view(jobs, id, "in state " + state, within, v -> v.state() == state);
    }
}
