package io.gosched.handler;

import java.time.Instant;
import java.util.function.Consumer;

import io.gosched.context.Context;
import io.gosched.runtime.Go;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.workload.Task;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One job of a handler: its arguments, bound and validated at submission, and the method it calls
 * on every attempt. Immutable; the arguments object is shared by the attempts (a handler that
 * mutates its arguments sees its own changes on a retry in this process).
 */
final class HandlerTask implements Task {

    private final HandlerMethod handler;
    private final Object args;
    private final JsonMapper json;

    HandlerTask(HandlerMethod handler, Object args, JsonMapper json) {
        this.handler = handler;
        this.args = args;
        this.json = json;
    }

    /** {@code handler:NAME}: how the job's record names its kind, and how a node knows whether it can run it. */
    @Override
    public String kind() {
        return JobRecord.Spec.HANDLER_PREFIX + handler.name;
    }

    /**
     * Calls the handler in the attempt's goroutine; a blocking one as a syscall, so that its M lets
     * go of its P while it blocks. Executed only by the attempt's goroutine.
     */
    @Override
    public Outcome run(Call call) {
        Context ctx = call.context();
        if (ctx.err() != null) {
            return new Outcome.Cancelled();
        }
        Attempt attempt = new Attempt(call.jobId(), call.attempt(), ctx, call.progress());
        Object value;
        try {
            if (handler.blocking) {
                value = Go.syscall(() -> {
                    try {
                        return handler.invoke(args, attempt);
                    } catch (Exception | Error e) {
                        throw e;
                    } catch (Throwable t) {
                        throw new Thrown(t);
                    }
                });
            } else {
                value = handler.invoke(args, attempt);
            }
        } catch (Go.Goexit exit) {
            throw exit; // the handler ended its goroutine: not a failure of the handler's own
        } catch (Error e) {
            throw e; // a VM error or an assertion: the attempt panics, as an escaped exception of any goroutine does
        } catch (Throwable t) {
            Throwable cause = t instanceof Thrown th ? th.getCause() : t;
            if (ctx.err() != null) {
                // Most likely the cancellation's own doing (a context error, an interrupted wait):
                // the job's cancel or deadline decides its state.
                return new Outcome.Cancelled();
            }
            return new Outcome.Failed(message(cause), true, null, null);
        }
        if (ctx.err() != null) {
            return new Outcome.Cancelled();
        }
        try {
            JsonNode result = value == null ? null : json.valueToTree(value);
            return new Outcome.Done(result);
        } catch (RuntimeException e) {
            return new Outcome.Failed("handler '" + handler.name + "' returned a " + value.getClass().getName()
                    + " that cannot be written as JSON: " + e.getMessage(), false, null, null);
        }
    }

    private static String message(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getName() : m;
    }

    /** A checked Throwable that is not an Exception, carried out of the syscall's Callable. */
    private static final class Thrown extends Exception {
        private static final long serialVersionUID = 1L;

        Thrown(Throwable cause) {
            super(cause);
        }
    }

    /** The JobContext of one attempt; its reports go to the attempt's run. */
    private record Attempt(String jobId, int attempt, Context context, Consumer<JobRecord.Report> reports) implements JobContext {

        @Override
        public void progress(double fraction, String message) {
            reports.accept(JobRecord.Report.of(fraction, message, Instant.now()));
        }
    }
}
