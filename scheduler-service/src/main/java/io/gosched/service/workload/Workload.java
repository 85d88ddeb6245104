package io.gosched.service.workload;

import java.util.List;
import java.util.Map;

/**
 * A validated workload: the channels it declares for itself, the steps of its main goroutine,
 * and what the validator worked out about it.
 *
 * @param channels            channels private to one run of the job (templates use these)
 * @param steps               the main goroutine's steps
 * @param goroutines          the most goroutines one run can create, the main one included;
 *                            admission control reserves this many
 * @param sharedChannels      names the steps use that the workload does not declare, each with the
 *                            pointer of its first use: they must exist in the shared channel
 *                            registry, where HTTP clients see them too
 * @param results             the job ids its {@code result} steps name, each with the pointer of its first
 *                            use: each must be one of the job's {@code after}
 */
public record Workload(List<ChannelDecl> channels, List<Step> steps, long goroutines, Map<String, String> sharedChannels,
        Map<String, String> results) {

    /** A workload without {@code result} steps. */
    public Workload(List<ChannelDecl> channels, List<Step> steps, long goroutines, Map<String, String> sharedChannels) {
        this(channels, steps, goroutines, sharedChannels, Map.of());
    }

    /** The workload of a job whose work is one {@link Task}: one goroutine, no channels. */
    public static Workload of(String pointer, Task task) {
        return new Workload(List.of(), List.of(new Step.Call(pointer, task)), 1, Map.of());
    }

    /** A channel declared by the workload: {@code make(chan any, capacity)} at the start of each run. */
    public record ChannelDecl(String name, int capacity) {}

    public Workload {
        channels = List.copyOf(channels);
        steps = List.copyOf(steps);
        sharedChannels = Map.copyOf(sharedChannels);
        results = results == null ? Map.of() : Map.copyOf(results);
    }
}
