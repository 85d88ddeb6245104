package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

import io.gosched.service.budget.ByteShare;
import io.gosched.service.channel.ChannelRegistry;
import io.gosched.service.channel.NamedChannel;
import io.gosched.service.workload.Run;
import io.gosched.service.workload.Workload;
import io.gosched.context.Context;
import io.gosched.runtime.Chan;

/**
 * What one attempt of a job needs and decides, the same on one node and in a cluster: the run's
 * channels at its start, and its outcome at its end.
 */
final class Attempt {

    private Attempt() {
    }

    /**
     * A run of {@code spec} with a fresh deadline context, the workload's own channels made and
     * its shared (named) channels looked up in {@code channels}. A shared channel that is gone
     * fails the run at the step that names it, with {@code gone} applied to the channel's name
     * as the detail; the caller then does not interpret the workload.
     */
    static Run start(JobSpec spec, ChannelRegistry channels, UnaryOperator<String> gone) {
        Map<String, Chan<Object>> chans = new HashMap<>();
        Map<String, ByteShare> shares = new HashMap<>();
        Workload w = spec.workload();
        for (Workload.ChannelDecl d : w.channels()) {
            chans.put(d.name(), Chan.make(d.capacity()));
        }
        Run.Failure missing = null;
        for (Map.Entry<String, String> e : w.sharedChannels().entrySet()) {
            NamedChannel ch = channels.named(e.getKey());
            if (ch == null) {
                missing = new Run.Failure(e.getValue(), gone.apply(e.getKey()));
            } else {
                chans.put(e.getKey(), ch.chan());
                shares.put(e.getKey(), ch.share());
            }
        }
        Run run = new Run(Context.withTimeout(Context.background(), Duration.ofMillis(spec.timeoutMs())), chans, shares);
        if (missing != null) {
            run.fail(missing);
        }
        return run;
    }

    /**
     * The attempt's final state: a failed step first, then a cancel asked for, then the deadline
     * ({@code err} is the run context's error, read before the caller cancels it itself).
     */
    static JobState outcome(Run run, boolean cancelRequested, RuntimeException err) {
        if (run.failure() != null) {
            return JobState.FAILED;
        }
        if (cancelRequested) {
            return JobState.CANCELLED;
        }
        if (err == Context.DEADLINE_EXCEEDED) {
            return JobState.TIMED_OUT;
        }
        return err != null ? JobState.CANCELLED : JobState.SUCCEEDED;
    }
}
