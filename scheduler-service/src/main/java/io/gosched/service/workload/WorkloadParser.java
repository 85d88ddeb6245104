package io.gosched.service.workload;

import io.gosched.service.error.InvalidRequestException;

import io.gosched.service.error.Violation;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.gosched.service.ServiceProperties;
import tools.jackson.databind.JsonNode;

/**
 * Turns a workload's JSON into a {@link Workload}, or refuses it with every {@link Violation}
 * found. The JSON is hostile until this class says otherwise: it checks types, unknown fields,
 * bounds, nesting depth, the total number of steps and the number of goroutines one run can
 * create, with loops and spawns multiplied through (a loop of 100 around a spawn of 100 is
 * 10,000 goroutines).
 *
 * <p>Grammar (every step is an object with an {@code op}):
 * <pre>
 * workload := { "channels": [ {"name": NAME, "capacity": n} ... ]?, "steps": [ step ... ] }
 * step     := {"op":"compute","us":n} | {"op":"hog","us":n} | {"op":"sleep","ms":n} | {"op":"yield"}
 *           | {"op":"spawn","count":n,"steps":[...]} | {"op":"wait"}
 *           | {"op":"send","channel":NAME,"value":any,"times":n?} | {"op":"recv","channel":NAME,"times":n?}
 *           | {"op":"close","channel":NAME} | {"op":"syscall","ms":n} | {"op":"loop","times":n,"steps":[...]}
 *           | {"op":"select","cases":[{"recv":NAME} | {"send":NAME,"value":any} ...],"default":bool?}
 *           | {"op":"result","of":JOB_ID}      (a job of the job's "after": its result becomes the last received value)
 * </pre>
 * Thread-safe: holds only the limits.
 */
public final class WorkloadParser {

    /** Counts above this are treated as "too many" without risking overflow in the products. */
    private static final long SATURATED = Long.MAX_VALUE / 4;

    private static final Set<String> WORKLOAD_FIELDS = Set.of("channels", "steps");
    private static final Set<String> CHANNEL_FIELDS = Set.of("name", "capacity");
    private static final Map<String, Set<String>> STEP_FIELDS = Map.ofEntries(
            Map.entry("compute", Set.of("op", "us")),
            Map.entry("hog", Set.of("op", "us")),
            Map.entry("sleep", Set.of("op", "ms")),
            Map.entry("yield", Set.of("op")),
            Map.entry("spawn", Set.of("op", "count", "steps")),
            Map.entry("wait", Set.of("op")),
            Map.entry("send", Set.of("op", "channel", "value", "times")),
            Map.entry("recv", Set.of("op", "channel", "times")),
            Map.entry("close", Set.of("op", "channel")),
            Map.entry("select", Set.of("op", "cases", "default")),
            Map.entry("syscall", Set.of("op", "ms")),
            Map.entry("loop", Set.of("op", "times", "steps")),
            Map.entry("result", Set.of("op", "of")));

    /** The ops of the DSL, in the order the docs list them. */
    public static final List<String> OPS = List.of("compute", "hog", "sleep", "yield", "spawn", "wait", "send", "recv",
            "close", "select", "syscall", "loop", "result");

    private final ServiceProperties.Limits limits;

    public WorkloadParser(ServiceProperties.Limits limits) {
        this.limits = limits;
    }

    public ServiceProperties.Limits limits() {
        return limits;
    }

    /**
     * Parses {@code node}, found at {@code pointer} of the request body ({@code ""} for the whole
     * body, {@code "/workload"} inside a job request).
     *
     * @throws InvalidRequestException with every violation, if there is any
     */
    public Workload parse(JsonNode node, String pointer) {
        JsonInput in = new JsonInput();
        Workload w = parse(node, pointer, in);
        in.throwIfInvalid();
        return w;
    }

    /** As {@link #parse(JsonNode, String)}, adding violations to {@code in} instead of throwing. */
    public Workload parse(JsonNode node, String pointer, JsonInput in) {
        if (!in.object(node, pointer)) {
            return null;
        }
        in.onlyFields(node, pointer, WORKLOAD_FIELDS);
        Walk walk = new Walk(in);
        List<Workload.ChannelDecl> channels = channels(node, pointer, walk);
        JsonNode steps = in.array(node, pointer, "steps", 1, limits.maxSteps(), true);
        List<Step> parsed = steps == null ? List.of() : walk.steps(steps, pointer + "/steps", 1, 1);
        if (walk.stepCount > limits.maxSteps()) {
            in.violation(pointer + "/steps", "has " + walk.stepCount + " steps in all, more than the limit of " + limits.maxSteps());
        }
        if (walk.goroutines > limits.maxGoroutinesPerJob()) {
            in.violation(walk.goroutinesPointer, "would start " + (walk.goroutines >= SATURATED ? "too many" : walk.goroutines)
                    + " goroutines in all, more than the limit of " + limits.maxGoroutinesPerJob());
        }
        Set<String> declared = new HashSet<>();
        channels.forEach(c -> declared.add(c.name()));
        Map<String, String> shared = new LinkedHashMap<>(walk.channelNames);
        shared.keySet().removeAll(declared);
        return in.ok() ? new Workload(channels, parsed, walk.goroutines, shared, walk.results) : null;
    }

    private List<Workload.ChannelDecl> channels(JsonNode node, String pointer, Walk walk) {
        JsonInput in = walk.in;
        JsonNode arr = in.array(node, pointer, "channels", 0, limits.maxChannelsPerJob(), false);
        if (arr == null) {
            return List.of();
        }
        Map<String, Workload.ChannelDecl> out = new LinkedHashMap<>();
        for (int i = 0; i < arr.size(); i++) {
            String at = pointer + "/channels/" + i;
            JsonNode c = arr.get(i);
            if (!in.object(c, at)) {
                continue;
            }
            in.onlyFields(c, at, CHANNEL_FIELDS);
            String name = in.name(c, at, "name", true);
            int cap = (int) in.integer(c, at, "capacity", 0, limits.maxChannelCapacity(), 0, false);
            if (name != null && out.putIfAbsent(name, new Workload.ChannelDecl(name, cap)) != null) {
                in.violation(at + "/name", "channel '" + name + "' is declared twice");
            }
        }
        return List.copyOf(out.values());
    }

    /** One walk over the tree: counts steps and goroutines, collects channel names. */
    private final class Walk {
        final JsonInput in;
        int stepCount;
        long goroutines = 1; // the job's main goroutine
        String goroutinesPointer = "";
        final Map<String, String> channelNames = new LinkedHashMap<>();
        final Map<String, String> results = new LinkedHashMap<>();

        Walk(JsonInput in) {
            this.in = in;
        }

        /**
         * @param depth         nesting level of this list (top level 1)
         * @param multiplicity  how many times this list runs in one job: the product of the
         *                      enclosing loop times and spawn counts
         */
        List<Step> steps(JsonNode arr, String pointer, int depth, long multiplicity) {
            List<Step> out = new ArrayList<>(arr.size());
            for (int i = 0; i < arr.size(); i++) {
                if (stepCount > limits.maxSteps()) {
                    return out; // already refused; don't walk a huge body further
                }
                Step s = step(arr.get(i), pointer + "/" + i, depth, multiplicity);
                if (s != null) {
                    out.add(s);
                }
            }
            return out;
        }

        private Step step(JsonNode node, String at, int depth, long multiplicity) {
            stepCount++;
            if (!in.object(node, at)) {
                return null;
            }
            String op = in.string(node, at, "op", true);
            if (op == null) {
                return null;
            }
            Set<String> allowed = STEP_FIELDS.get(op);
            if (allowed == null) {
                in.violation(at + "/op", "unknown op '" + abbreviate(op) + "' (one of " + String.join(", ", OPS) + ")");
                return null;
            }
            in.onlyFields(node, at, allowed);
            return switch (op) {
                case "compute" -> new Step.Compute(at, in.integer(node, at, "us", 1, limits.maxComputeUs(), 0, true));
                case "hog" -> new Step.Hog(at, in.integer(node, at, "us", 1, limits.maxHogUs(), 0, true));
                case "sleep" -> new Step.Sleep(at, in.integer(node, at, "ms", 0, limits.maxSleepMs(), 0, true));
                case "syscall" -> new Step.Syscall(at, in.integer(node, at, "ms", 0, limits.maxSyscallMs(), 0, true));
                case "yield" -> new Step.Yield(at);
                case "wait" -> new Step.Wait(at);
                case "send" -> new Step.Send(at, channel(node, at, "channel"), value(node, at, "value"),
                        (int) in.integer(node, at, "times", 1, limits.maxTimes(), 1, false));
                case "recv" -> new Step.Recv(at, channel(node, at, "channel"),
                        (int) in.integer(node, at, "times", 1, limits.maxTimes(), 1, false));
                case "close" -> new Step.Close(at, channel(node, at, "channel"));
                case "result" -> {
                    String of = in.string(node, at, "of", true);
                    if (of == null) {
                        yield null;
                    }
                    results.putIfAbsent(of, at + "/of");
                    yield new Step.Result(at, of);
                }
                case "select" -> select(node, at);
                case "spawn" -> {
                    int count = (int) in.integer(node, at, "count", 1, limits.maxSpawn(), 1, true);
                    long children = saturatingMultiply(multiplicity, count);
                    goroutines = Math.min(SATURATED, goroutines + children);
                    if (goroutines > limits.maxGoroutinesPerJob() && goroutinesPointer.isEmpty()) {
                        goroutinesPointer = at + "/count";
                    }
                    yield new Step.Spawn(at, count, nested(node, at, depth, children));
                }
                case "loop" -> {
                    int times = (int) in.integer(node, at, "times", 1, limits.maxTimes(), 1, true);
                    yield new Step.Loop(at, times, nested(node, at, depth, saturatingMultiply(multiplicity, times)));
                }
                default -> throw new IllegalStateException("op in STEP_FIELDS without a case: " + op);
            };
        }

        private List<Step> nested(JsonNode node, String at, int depth, long multiplicity) {
            JsonNode arr = in.array(node, at, "steps", 1, limits.maxSteps(), true);
            if (arr == null) {
                return List.of();
            }
            if (depth + 1 > limits.maxDepth()) {
                in.violation(at + "/steps", "nests deeper than the limit of " + limits.maxDepth() + " levels");
                return List.of();
            }
            return steps(arr, at + "/steps", depth + 1, multiplicity);
        }

        private Step select(JsonNode node, String at) {
            JsonNode arr = in.array(node, at, "cases", 1, limits.maxSelectCases(), true);
            boolean hasDefault = in.bool(node, at, "default", false);
            List<Step.Case> cases = new ArrayList<>();
            if (arr != null) {
                for (int i = 0; i < arr.size(); i++) {
                    String c = at + "/cases/" + i;
                    JsonNode n = arr.get(i);
                    if (!in.object(n, c)) {
                        continue;
                    }
                    boolean send = n.has("send");
                    boolean recv = n.has("recv");
                    if (send == recv) {
                        in.violation(c, "must have exactly one of 'send' or 'recv'");
                        continue;
                    }
                    in.onlyFields(n, c, send ? Set.of("send", "value") : Set.of("recv"));
                    String ch = channel(n, c, send ? "send" : "recv");
                    cases.add(new Step.Case(c, ch, send ? value(n, c, "value") : null));
                }
            }
            return new Step.Select(at, cases, hasDefault);
        }

        private String channel(JsonNode node, String at, String field) {
            String name = in.name(node, at, field, true);
            if (name != null) {
                channelNames.putIfAbsent(name, at + "/" + field);
            }
            return name;
        }

        private JsonNode value(JsonNode node, String at, String field) {
            JsonNode v = node.get(field);
            if (v == null) {
                in.violation(at + "/" + field, "is required (any JSON value)");
                return null;
            }
            return v;
        }
    }

    static long saturatingMultiply(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if (hi != 0 || lo < 0 || lo > SATURATED) {
            return SATURATED;
        }
        return lo;
    }

    private static String abbreviate(String s) {
        return s.length() <= 32 ? s : s.substring(0, 32) + "...";
    }
}
