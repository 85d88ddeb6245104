package io.gosched.service.job;

import java.util.Set;

import io.gosched.service.handler.JobHandlers;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.workload.JsonInput;
import io.gosched.service.workload.Task;
import tools.jackson.databind.JsonNode;

/**
 * A cluster node's handlers at submission: its own ones bind and validate their arguments as
 * ever; a handler it lacks is accepted as a job for another node, its arguments unread here
 * (only a node with the handler can bind them; one that refuses them fails the job, naming the
 * problem). The job's record keeps the kind {@code handler:NAME}, and a node without the handler
 * never claims it ({@link Claims}), so the placeholder task below is never run.
 *
 * <p>Why not refuse an unknown name: no node can tell that a handler will never come. The nodes
 * that have it may be restarting, or a rolling deploy may bring them after the submission; the
 * job waits queued, its view saying {@code waitingFor: "handler NAME"}, and DELETE cancels it.
 */
final class HandlersElsewhere implements JobHandlers {

    /** Longest handler name accepted for another node: it is repeated in the record's kind and in views. */
    static final int MAX_NAME_CHARS = 200;

    private final JobHandlers own;

    HandlersElsewhere(JobHandlers own) {
        this.own = own;
    }

    @Override
    public Set<String> names() {
        return own.names();
    }

    @Override
    public Task parse(String name, JsonNode args, String pointer, JsonInput in) {
        if (own.names().contains(name)) {
            return own.parse(name, args, pointer, in);
        }
        if (name.isBlank() || name.length() > MAX_NAME_CHARS) {
            in.violation("/handler", "a handler's name is 1 to " + MAX_NAME_CHARS + " characters, not blank");
            return null;
        }
        return new Elsewhere(name);
    }

    /** The task of a handler this node lacks: it only carries the kind. */
    private record Elsewhere(String name) implements Task {
        @Override
        public String kind() {
            return JobRecord.Spec.HANDLER_PREFIX + name;
        }

        @Override
        public Outcome run(Call call) {
            return new Outcome.Failed("handler '" + name + "' is not on this node", true, null, null);
        }
    }
}
