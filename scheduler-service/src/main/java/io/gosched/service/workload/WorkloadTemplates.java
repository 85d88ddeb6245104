package io.gosched.service.workload;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Named workloads with parameters: the classic Go scheduler demonstrations. A template expands
 * to ordinary DSL JSON, which then goes through the same {@link WorkloadParser} as a hand-written
 * workload, so a template can never get past a limit that a client could not.
 *
 * <p>Thread-safe and immutable.
 */
public final class WorkloadTemplates {

    /** A parameter of a template: its name, bounds, default and meaning (listed at GET /api/v1/workloads). */
    public record Param(String name, long min, long max, long defaultValue, String description) {}

    /** A template as listed to clients. */
    public record Template(String name, String description, List<Param> params) {}

    private record Entry(Template template, Function<Map<String, Long>, JsonNode> expand) {}

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private final Map<String, Entry> entries = new LinkedHashMap<>();

    public WorkloadTemplates() {
        add(new Template("ping-pong", "Two goroutines bounce a message over two unbuffered channels (Go's pingPongHog without the hog).",
                        List.of(new Param("rounds", 1, 100_000, 1000, "round trips"))),
                p -> {
                    long rounds = p.get("rounds");
                    return workload(channels(ch("ping", 0), ch("pong", 0)), steps(
                            spawn(1, steps(loop(rounds, steps(recv("ping"), send("pong", F.stringNode("pong")))))),
                            loop(rounds, steps(send("ping", F.stringNode("ping")), recv("pong"))),
                            op("wait")));
                });
        add(new Template("fan-out-fan-in", "A producer feeds workers over one channel; the main goroutine gathers their results.",
                        List.of(new Param("workers", 1, 1000, 8, "worker goroutines"),
                                new Param("itemsPerWorker", 1, 10_000, 100, "items each worker handles"),
                                new Param("computeUs", 1, 100_000, 100, "CPU work per item, in microseconds"))),
                p -> {
                    long workers = p.get("workers");
                    long items = p.get("itemsPerWorker");
                    long total = workers * items;
                    return workload(channels(ch("work", 0), ch("results", 0)), steps(
                            spawn(1, steps(send("work", F.numberNode(1), total))),
                            spawn(workers, steps(loop(items, steps(recv("work"), compute(p.get("computeUs")),
                                    send("results", F.numberNode(1), 1))))),
                            recv("results", total),
                            op("wait")));
                });
        add(new Template("pipeline", "Items flow through a chain of stages, one goroutine per stage, joined by unbuffered channels.",
                        List.of(new Param("stages", 1, 30, 4, "stages between source and sink"),
                                new Param("items", 1, 100_000, 1000, "items pushed through"),
                                new Param("computeUs", 0, 100_000, 10, "CPU work per item per stage, in microseconds"))),
                p -> {
                    long stages = p.get("stages");
                    long items = p.get("items");
                    ArrayNode chans = F.arrayNode();
                    for (int i = 0; i <= stages; i++) {
                        chans.add(ch("c" + i, 0));
                    }
                    ArrayNode steps = F.arrayNode();
                    steps.add(spawn(1, steps(send("c0", F.numberNode(0), items))));
                    for (int i = 0; i < stages; i++) {
                        ArrayNode body = steps(recv("c" + i));
                        if (p.get("computeUs") > 0) {
                            body.add(compute(p.get("computeUs")));
                        }
                        body.add(send("c" + (i + 1), F.numberNode(i + 1), 1));
                        steps.add(spawn(1, steps(loop(items, body))));
                    }
                    steps.add(recv("c" + stages, items));
                    steps.add(op("wait"));
                    return workload(chans, steps);
                });
        add(new Template("timer-storm", "Many goroutines sleep in short bursts at once: a load on the per-P timer heaps.",
                        List.of(new Param("goroutines", 1, 100_000, 1000, "sleeping goroutines"),
                                new Param("sleeps", 1, 10_000, 10, "sleeps per goroutine"),
                                new Param("sleepMs", 0, 10_000, 1, "length of each sleep"))),
                p -> workload(channels(), steps(
                        spawn(p.get("goroutines"), steps(loop(p.get("sleeps"), steps(sleep(p.get("sleepMs")))))),
                        op("wait"))));
        add(new Template("hog-vs-ticker", "CPU hogs with no safe point compete with a goroutine that sleeps in short ticks: "
                        + "shows sysmon preempting and handing off the hogged Ps.",
                        List.of(new Param("hogs", 1, 64, 2, "hogging goroutines"),
                                new Param("hogUs", 1, 50_000, 20_000, "length of one hog burst, in microseconds"),
                                new Param("bursts", 1, 1000, 10, "hog bursts per hogging goroutine"),
                                new Param("ticks", 1, 10_000, 50, "ticks of the ticker goroutine"),
                                new Param("tickMs", 1, 1000, 2, "tick period"))),
                p -> workload(channels(), steps(
                        spawn(p.get("hogs"), steps(loop(p.get("bursts"), steps(hog(p.get("hogUs")))))),
                        spawn(1, steps(loop(p.get("ticks"), steps(sleep(p.get("tickMs")))))),
                        op("wait"))));
    }

    private void add(Template t, Function<Map<String, Long>, JsonNode> expand) {
        entries.put(t.name(), new Entry(t, expand));
    }

    public List<Template> list() {
        return entries.values().stream().map(Entry::template).toList();
    }

    public boolean exists(String name) {
        return entries.containsKey(name);
    }

    /**
     * The workload JSON of template {@code name} with {@code params} (an object or null),
     * or {@code null} with violations in {@code in}; {@code pointer} locates the params.
     */
    public JsonNode expand(String name, JsonNode params, String pointer, JsonInput in) {
        Entry e = entries.get(name);
        if (e == null) {
            throw new IllegalArgumentException("unknown template " + name);
        }
        Map<String, Long> values = new LinkedHashMap<>();
        if (params != null && !params.isNull()) {
            if (!in.object(params, pointer)) {
                return null;
            }
            in.onlyFields(params, pointer, Set.copyOf(e.template.params().stream().map(Param::name).toList()));
        }
        JsonNode src = params == null || params.isNull() ? F.objectNode() : params;
        for (Param p : e.template.params()) {
            values.put(p.name(), in.integer(src, pointer, p.name(), p.min(), p.max(), p.defaultValue(), false));
        }
        return in.ok() ? e.expand.apply(values) : null;
    }

    // ---- tiny builders for the DSL's JSON ----

    private static ObjectNode workload(ArrayNode channels, ArrayNode steps) {
        ObjectNode w = F.objectNode();
        if (!channels.isEmpty()) {
            w.set("channels", channels);
        }
        w.set("steps", steps);
        return w;
    }

    private static ArrayNode channels(ObjectNode... cs) {
        ArrayNode a = F.arrayNode();
        for (ObjectNode c : cs) {
            a.add(c);
        }
        return a;
    }

    private static ObjectNode ch(String name, int capacity) {
        return F.objectNode().put("name", name).put("capacity", capacity);
    }

    private static ArrayNode steps(ObjectNode... ss) {
        ArrayNode a = F.arrayNode();
        for (ObjectNode s : ss) {
            a.add(s);
        }
        return a;
    }

    private static ObjectNode op(String op) {
        return F.objectNode().put("op", op);
    }

    private static ObjectNode spawn(long count, ArrayNode steps) {
        ObjectNode s = op("spawn").put("count", count);
        s.set("steps", steps);
        return s;
    }

    private static ObjectNode loop(long times, ArrayNode steps) {
        ObjectNode s = op("loop").put("times", times);
        s.set("steps", steps);
        return s;
    }

    private static ObjectNode send(String ch, JsonNode value) {
        return send(ch, value, 1);
    }

    private static ObjectNode send(String ch, JsonNode value, long times) {
        ObjectNode s = op("send").put("channel", ch);
        s.set("value", value);
        if (times != 1) {
            s.put("times", times);
        }
        return s;
    }

    private static ObjectNode recv(String ch) {
        return recv(ch, 1);
    }

    private static ObjectNode recv(String ch, long times) {
        ObjectNode s = op("recv").put("channel", ch);
        if (times != 1) {
            s.put("times", times);
        }
        return s;
    }

    private static ObjectNode compute(long us) {
        return op("compute").put("us", us);
    }

    private static ObjectNode hog(long us) {
        return op("hog").put("us", us);
    }

    private static ObjectNode sleep(long ms) {
        return op("sleep").put("ms", ms);
    }
}
