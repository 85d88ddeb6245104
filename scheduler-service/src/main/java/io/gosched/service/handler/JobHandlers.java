package io.gosched.service.handler;

import java.util.Set;

import io.gosched.service.workload.JsonInput;
import io.gosched.service.workload.Task;
import tools.jackson.databind.JsonNode;

/**
 * The application's own job handlers, as this node has them: what a job body's
 * {@code "handler": NAME, "args": {...}} runs. The Spring Boot starter provides it from the
 * {@code @JobHandler} methods of the application's beans; a node without an implementation has
 * no handlers and refuses handler jobs. Implementations are thread-safe.
 *
 * <p>A handler job's record keeps the kind {@code handler:NAME}
 * ({@link io.gosched.service.job.spi.JobRecord.Spec#HANDLER_PREFIX}), which is how a node that
 * lacks the handler knows to leave the job to one that has it.
 */
public interface JobHandlers {

    /** No handlers: every handler job is refused as unknown. */
    JobHandlers NONE = new JobHandlers() {
        @Override
        public Set<String> names() {
            return Set.of();
        }

        @Override
        public Task parse(String name, JsonNode args, String pointer, JsonInput in) {
            in.violation(pointer, "unknown handler '" + name + "': this service has no job handlers (see GET /api/v1/handlers)");
            return null;
        }
    };

    /** The names of the handlers this node can run. */
    Set<String> names();

    /**
     * The task that runs handler {@code name} on {@code args} (null if the body had none), with the
     * arguments bound and validated now, at submission; null with each problem recorded in
     * {@code in} under {@code pointer} (an unknown handler, or a bad argument named by its path).
     */
    Task parse(String name, JsonNode args, String pointer, JsonInput in);
}
