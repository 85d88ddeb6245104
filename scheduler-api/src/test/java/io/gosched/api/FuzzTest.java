package io.gosched.api;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.gosched.api.testapp.TestApplication;
import io.gosched.api.testapp.TestProperties;
import io.gosched.api.workload.InvalidWorkloadException;
import io.gosched.api.workload.JsonInput;
import io.gosched.api.workload.WorkloadParser;
import io.gosched.api.workload.WorkloadTemplates;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Property-based tests: random and mutated JSON at the DSL parser and at the endpoints. The
 * parser answers a workload or violations, nothing else, quickly; the endpoints answer 2xx or
 * 4xx, never 5xx, and never hang.
 */
class FuzzTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final JsonNodeFactory F = JsonNodeFactory.instance;
    static final WorkloadParser PARSER = new WorkloadParser(TestProperties.api(Map.of()).limits());
    static final List<String> KEYS = List.of("op", "us", "ms", "count", "steps", "times", "channel", "value", "cases", "default",
            "recv", "send", "channels", "name", "capacity", "workload", "template", "params", "timeoutMs", "priority",
            "notBefore", "retry", "maxAttempts", "backoffMs", "multiplier", "rounds", "zz");
    static final List<String> WORDS = List.of("compute", "hog", "sleep", "yield", "spawn", "wait", "send", "recv", "close",
            "select", "syscall", "loop", "ping", "c", "fz", "ping-pong", "pipeline", "", "a/b~c", "2026-01-01T00:00:00Z", "\u0000");

    static ConfigurableApplicationContext app;
    static WebTestClient http;

    @BeforeContainer
    static void start() {
        app = new SpringApplicationBuilder(TestApplication.class).web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "server.address=127.0.0.1",
                        // every fuzzed job that happens to be valid ends fast
                        "gosched.api.limits.default-timeout-ms=50", "gosched.api.limits.max-timeout-ms=100",
                        "gosched.api.limits.max-hog-us=1000", "gosched.api.limits.max-delay-ms=100",
                        "gosched.api.limits.max-goroutines-per-job=200", "gosched.api.channels.max-timeout-ms=20",
                        "gosched.api.channels.default-timeout-ms=10")
                .run();
        String port = app.getEnvironment().getProperty("local.server.port");
        http = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(10)).build();
        http.post().uri("/api/v1/channels").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"name\":\"fz\",\"capacity\":4}")
                .exchange().expectStatus().isCreated();
    }

    @AfterContainer
    static void stop() {
        app.close();
    }

    // ------------------------------------------------------------------ generators

    Arbitrary<JsonNode> json(int depth) {
        Arbitrary<JsonNode> leaf = Arbitraries.oneOf(
                Arbitraries.integers().between(-5, 2_000_000).map(i -> (JsonNode) F.numberNode(i)),
                Arbitraries.longs().map(l -> (JsonNode) F.numberNode(l)),
                Arbitraries.doubles().map(d -> (JsonNode) F.numberNode(d)),
                Arbitraries.of(WORDS).map(s -> (JsonNode) F.stringNode(s)),
                Arbitraries.strings().ofMaxLength(20).map(s -> (JsonNode) F.stringNode(s)),
                Arbitraries.of(true, false).map(b -> (JsonNode) F.booleanNode(b)),
                Arbitraries.just((JsonNode) F.nullNode()));
        if (depth == 0) {
            return leaf;
        }
        Arbitrary<JsonNode> child = Arbitraries.lazy(() -> json(depth - 1));
        Arbitrary<JsonNode> object = Combinators.combine(Arbitraries.of(KEYS).list().ofMaxSize(5), child.list().ofSize(5))
                .as((keys, values) -> {
                    ObjectNode o = F.objectNode();
                    for (int i = 0; i < keys.size(); i++) {
                        o.set(keys.get(i), values.get(i));
                    }
                    return (JsonNode) o;
                });
        Arbitrary<JsonNode> array = child.list().ofMaxSize(5).map(vs -> {
            ArrayNode a = F.arrayNode();
            vs.forEach(a::add);
            return (JsonNode) a;
        });
        return Arbitraries.frequencyOf(Tuple.of(3, leaf), Tuple.of(4, object), Tuple.of(2, array));
    }

    /** Valid workloads to start mutating from: every template, and one with every op. */
    static List<JsonNode> seeds() {
        List<JsonNode> seeds = new ArrayList<>();
        WorkloadTemplates t = new WorkloadTemplates();
        for (WorkloadTemplates.Template tpl : t.list()) {
            seeds.add(t.expand(tpl.name(), null, "/params", new JsonInput()));
        }
        seeds.add(JSON.readTree("""
                {"channels":[{"name":"c","capacity":1}],"steps":[{"op":"compute","us":10},{"op":"hog","us":10},
                 {"op":"sleep","ms":1},{"op":"yield"},{"op":"spawn","count":2,"steps":[{"op":"send","channel":"c","value":1}]},
                 {"op":"recv","channel":"c","times":2},{"op":"select","cases":[{"recv":"c"},{"send":"c","value":[1]}],"default":true},
                 {"op":"wait"},{"op":"syscall","ms":1},{"op":"loop","times":2,"steps":[{"op":"yield"}]},{"op":"close","channel":"c"}]}"""));
        return seeds;
    }

    static void paths(JsonNode n, String at, List<String> out) {
        out.add(at);
        if (n.isObject()) {
            n.propertyNames().forEach(k -> paths(n.get(k), at + "/" + k, out));
        } else if (n.isArray()) {
            for (int i = 0; i < n.size(); i++) {
                paths(n.get(i), at + "/" + i, out);
            }
        }
    }

    /** Replaces the node at the {@code pick}-th path of {@code seed} by {@code with} (or deletes it). */
    static JsonNode mutate(JsonNode seed, int pick, JsonNode with, boolean delete) {
        JsonNode copy = seed.deepCopy();
        List<String> paths = new ArrayList<>();
        paths(copy, "", paths);
        String p = paths.get(Math.floorMod(pick, paths.size()));
        if (p.isEmpty()) {
            return with;
        }
        String parent = p.substring(0, p.lastIndexOf('/'));
        String last = p.substring(p.lastIndexOf('/') + 1);
        JsonNode container = parent.isEmpty() ? copy : copy.at(parent);
        if (container instanceof ObjectNode o) {
            if (delete) {
                o.remove(last);
            } else {
                o.set(last, with);
            }
        } else if (container instanceof ArrayNode a) {
            int i = Integer.parseInt(last);
            if (delete) {
                a.remove(i);
            } else {
                a.set(i, with);
            }
        }
        return copy;
    }

    @Provide
    Arbitrary<JsonNode> randomJson() {
        return json(4);
    }

    @Provide
    Arbitrary<JsonNode> mutatedWorkload() {
        return Combinators.combine(Arbitraries.of(seeds()), Arbitraries.integers().between(0, 10_000), json(2),
                Arbitraries.of(true, false)).as(FuzzTest::mutate);
    }

    /** Text-level damage to a valid request: truncation, a stray character, a doubled span. */
    @Provide
    Arbitrary<String> damagedText() {
        Arbitrary<String> base = Arbitraries.of(seeds()).map(s -> "{\"workload\":" + s + "}");
        return Combinators.combine(base, Arbitraries.integers().between(0, 100_000), Arbitraries.of('{', '}', '"', ',', ':', '[', 'x', '\\'),
                Arbitraries.integers().between(0, 2)).as((s, pos, c, kind) -> {
                    int p = Math.floorMod(pos, s.length());
                    return switch (kind) {
                        case 0 -> s.substring(0, p);
                        case 1 -> s.substring(0, p) + c + s.substring(p);
                        default -> s.substring(0, p) + s.substring(p, Math.min(s.length(), p + 40)).repeat(2) + s.substring(p);
                    };
                });
    }

    // ------------------------------------------------------------------ properties

    @Property(tries = 1500)
    void parserAnswersAWorkloadOrViolationsForRandomJson(@ForAll("randomJson") JsonNode body) {
        parseQuickly(body);
    }

    @Property(tries = 1500)
    void parserAnswersAWorkloadOrViolationsForMutatedWorkloads(@ForAll("mutatedWorkload") JsonNode body) {
        parseQuickly(body);
    }

    static void parseQuickly(JsonNode body) {
        long t0 = System.nanoTime();
        try {
            PARSER.parse(body, "");
        } catch (InvalidWorkloadException e) {
            assertThat(e.violations()).isNotEmpty().allSatisfy(v -> assertThat(v.pointer()).matches("(/[^/]*)*"));
        }
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(1));
    }

    @Property(tries = 150)
    void jobEndpointNeverAnswers5xxToMutatedWorkloads(@ForAll("mutatedWorkload") JsonNode workload) {
        ObjectNode body = F.objectNode();
        body.set("workload", workload);
        assertNo5xx(http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue(body.toString()).exchange()
                .expectBody(String.class).returnResult());
    }

    @Property(tries = 150)
    void endpointsNeverAnswer5xxToRandomJson(@ForAll("randomJson") JsonNode body) {
        for (String uri : new String[] {"/api/v1/jobs", "/api/v1/channels", "/api/v1/channels/fz/send", "/api/v1/channels/fz/recv"}) {
            assertNo5xx(http.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body.toString()).exchange()
                    .expectBody(String.class).returnResult());
        }
    }

    @Property(tries = 150)
    void endpointsNeverAnswer5xxToDamagedText(@ForAll("damagedText") String text) {
        for (String uri : new String[] {"/api/v1/jobs", "/api/v1/channels"}) {
            assertNo5xx(http.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(text).exchange()
                    .expectBody(String.class).returnResult());
        }
    }

    static void assertNo5xx(EntityExchangeResult<String> r) {
        assertThat(r.getStatus().value()).as("status for %s", r.getResponseBody()).isBetween(200, 499);
        if (r.getStatus().value() >= 400) {
            assertThat(r.getResponseHeaders().getContentType()).isNotNull()
                    .satisfies(ct -> assertThat(ct.isCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)).isTrue());
            assertThat(r.getResponseBody()).doesNotContain("\tat ").doesNotContain("Exception:");
        }
    }
}
