package io.gosched.service.job;

import java.util.List;
import java.util.Map;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoroutineInfo;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.workload.Run;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Panics: an exception that escaped one of a job's goroutines fails that job's attempt, with the
 * exception and the dump of the job's goroutines as its error, and nothing else (the service and
 * its other jobs go on). Called by the runtime's uncaught-exception policy, on the dying
 * goroutine.
 */
final class Panics {

    private static final Log log = LogFactory.getLog(Panics.class);

    private final HeldJobs held;
    private final GoRuntime runtime;
    private final Dispatcher dispatcher;

    Panics(HeldJobs held, GoRuntime runtime, Dispatcher dispatcher) {
        this.held = held;
        this.runtime = runtime;
        this.dispatcher = dispatcher;
    }

    /** The most goroutines whose traceback goes into that dump (a few hundred bytes each). */
    private static final int PANIC_DUMP_GOROUTINES = 512;

    /**
     * An exception escaped goroutine {@code goid} (called on it, by the runtime's policy). If its
     * labels name a job running here, the attempt fails as a cancel would end it: its context is
     * cancelled, so every other goroutine of the job ends, and the outcome is written (the
     * {@link Finisher}'s) with the exception and the dump of the job's goroutines as taken now as its
     * error. If the dying goroutine is the attempt's main one, nothing else would finish the
     * attempt: it is finished from here.
     *
     * @return false if the goroutine is not one of a job running on this node (the caller logs it)
     */
    boolean goroutineFailed(long goid, Map<String, String> labels, Throwable e) {
        String id = labels.get("job");
        HeldJob l = id == null ? null : held.get(id);
        if (l == null || l.attempt == 0) {
            return false; // not a job's, or its attempt ended already (a goroutine that outlived it)
        }
        log.warn("job " + id + ": goroutine " + goid + " " + labels + " ended by an uncaught exception; attempt " + l.attempt
                + " fails", e);
        if (l.panic.get() == null) {
            l.panic.compareAndSet(null, new JobRecord.Failure(JobRecord.Failure.PANIC, "", panicDetail(goid, labels, e, id)));
        }
        Run r = l.run;
        if (r != null) {
            r.context().cancel();
        }
        if (goid == l.rootGoid) {
            dispatcher.finishOffGoroutine(l, r, r == null ? null : r.context().err());
        }
        return true;
    }

    /** The goroutine, its exception (with its first frames) and the traceback of the job's goroutines, bounded. */
    private String panicDetail(long goid, Map<String, String> labels, Throwable e, String id) {
        StringBuilder b = new StringBuilder();
        b.append("goroutine ").append(goid).append(' ').append(labels).append(" ended by an uncaught exception: ").append(e).append('\n');
        StackTraceElement[] frames = e.getStackTrace();
        for (int i = 0; i < Math.min(frames.length, 16); i++) {
            b.append("\tat ").append(frames[i]).append('\n');
        }
        if (frames.length > 16) {
            b.append("\t... ").append(frames.length - 16).append(" more\n");
        }
        String dump;
        try {
            // A snapshot walks every goroutine of the runtime (no stop-the-world; docs/debugging.md has
            // its cost); only the first few hundred of the job's are printed: more would not fit the bound.
            List<GoroutineInfo> mine = runtime.goroutines().stream().filter(g -> id.equals(g.labels().get("job"))).toList();
            dump = GoRuntime.traceback(mine.subList(0, Math.min(mine.size(), PANIC_DUMP_GOROUTINES)));
            if (mine.size() > PANIC_DUMP_GOROUTINES) {
                dump += "... and " + (mine.size() - PANIC_DUMP_GOROUTINES) + " more goroutines of the job\n";
            }
        } catch (RuntimeException unavailable) {
            dump = "(no goroutine dump: " + unavailable + ")\n";
        }
        b.append("\nthe job's goroutines at the failure:\n\n").append(dump);
        if (b.length() > JobService.MAX_PANIC_DETAIL_CHARS) {
            int total = b.length();
            String tail = "\n... truncated: " + (JobService.MAX_PANIC_DETAIL_CHARS - 100) + " of " + total + " characters shown\n";
            b.setLength(JobService.MAX_PANIC_DETAIL_CHARS - 100);
            b.append(tail);
        }
        return b.toString();
    }
}
