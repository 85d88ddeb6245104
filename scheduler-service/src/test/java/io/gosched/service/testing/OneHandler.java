package io.gosched.service.testing;

import java.util.Set;
import java.util.function.Function;

import io.gosched.service.handler.JobHandlers;
import io.gosched.service.workload.JsonInput;
import io.gosched.service.workload.Task;
import tools.jackson.databind.JsonNode;

/**
 * An application's job handlers with one handler, for tests: as the starter's registry does, an
 * unknown name is refused naming it, and the handler's arguments are bound and checked at
 * submission ({@code bind}), each problem recorded under its pointer.
 */
public final class OneHandler implements JobHandlers {

    /** Binds a job's {@code args} (null if it had none): the run, or null with each problem recorded in {@code in}. */
    @FunctionalInterface
    public interface Binding {
        Function<Task.Call, Task.Outcome> bind(JsonNode args, String pointer, JsonInput in);
    }

    private final String name;
    private final Binding binding;

    public OneHandler(String name, Binding binding) {
        this.name = name;
        this.binding = binding;
    }

    /** {@code args.field} as a non-negative integer, or null with the violation recorded under {@code pointer/field}. */
    public static Long nonNegative(JsonNode args, String field, String pointer, JsonInput in) {
        JsonNode n = args == null ? null : args.get(field);
        if (n == null || !n.isIntegralNumber() || n.longValue() < 0) {
            in.violation(pointer + "/" + field, "must be a non-negative integer");
            return null;
        }
        return n.longValue();
    }

    @Override
    public Set<String> names() {
        return Set.of(name);
    }

    @Override
    public Task parse(String handler, JsonNode args, String pointer, JsonInput in) {
        if (!handler.equals(name)) {
            in.violation(pointer, "unknown handler '" + handler + "'");
            return null;
        }
        Function<Task.Call, Task.Outcome> run = binding.bind(args, pointer, in);
        if (run == null) {
            return null;
        }
        return new Task() {
            @Override
            public Outcome run(Call call) {
                return run.apply(call);
            }

            @Override
            public String kind() {
                return "handler:" + name;
            }
        };
    }
}
