package io.gosched.web.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.web.contract.ReadmeCalls.Answer;
import io.gosched.web.contract.ReadmeCalls.Caller;
import io.gosched.web.contract.ReadmeCalls.Curl;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import io.gosched.web.trace.FlightRecorderService;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The document holds for every call of the README: README.md's HTTP API lines as written, then
 * every endpoint of scheduler-api's README with each answer it promises (success, 404, 409, 422,
 * 202 while running, a timed-out receive, a closed channel, ...), made through Prism in front of the
 * service with the document the service serves. Any request or answer the document does not
 * describe fails the test, listed with Prism's reasons; and every operation of the document must
 * have been called with a 2xx answer, so a new endpoint cannot slip past unchecked.
 *
 * <p>The telemetry stream never ends, and Prism judges an answer once it is whole, so that one
 * call is made straight to the service and its first event checked here.
 */
abstract class ReadmeContract {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    int port;

    @Autowired
    FlightRecorderService flight;

    @TempDir
    Path dir;

    /** The bearer token the service requires, or null when it runs open. */
    abstract String token();

    @Test
    void everyReadmeCallIsDescribedByTheServedDocument() throws Exception {
        Prism.assumeInstalled();
        URI service = URI.create("http://127.0.0.1:" + port);
        try (Prism prism = Prism.inFrontOf(service, dir)) {
            Caller c = new Caller(prism.base, token());
            List<String> wrong = new ArrayList<>();

            // README.md, line by line.
            for (Curl curl : ReadmeCalls.readme("## HTTP API")) {
                if (curl.endless()) {
                    String first = Caller.firstEvent(service, curl, token());
                    assertThat(first).as(curl.line()).startsWith("200 text/event-stream").contains("data:{");
                    continue;
                }
                Answer a = c.call(curl);
                expect(wrong, a, a.status() < 400, curl.line());
            }

            // README.md's schedules, line by line.
            for (Curl curl : ReadmeCalls.readme("### Schedules")) {
                Answer a = c.call(curl);
                expect(wrong, a, a.status() < 400, curl.line());
            }

            // scheduler-api/README.md's endpoint table, each answer it lists.
            String job = submit(c, wrong, "{\"template\":\"fan-out-fan-in\",\"params\":{\"workers\":4}}");
            expect(wrong, c.call("GET", "/api/v1/jobs/" + job, null), 200);
            String slow = submit(c, wrong, "{\"workload\":{\"steps\":[{\"op\":\"sleep\",\"ms\":60000}]},\"name\":\"slow\"}");
            expect(wrong, c.call("GET", "/api/v1/jobs/" + slow + "/result", null), 202);
            expect(wrong, awaitFinal(c, job), 200);
            expect(wrong, c.call("GET", "/api/v1/jobs/" + job + "/events", null), 200);
            expect(wrong, c.call("GET", "/api/v1/jobs/" + job + "/goroutines", null), 200);
            expect(wrong, c.call("GET", "/api/v1/jobs", null), 200);
            expect(wrong, c.call("GET", "/api/v1/jobs?state=succeeded&page=0&size=10", null), 200);
            refused(wrong, c, service, "GET", "/api/v1/jobs?state=finished", null, 422);
            expect(wrong, c.call("GET", "/api/v1/jobs/no-such-job", null), 404);
            expect(wrong, c.call("POST", "/api/v1/jobs", "{\"template\":\"no-such-template\"}"), 422);
            expect(wrong, c.call(new Curl("POST", "/api/v1/jobs", Map.of("Content-Type", "application/json",
                    "Idempotency-Key", "readme-1"), "{\"template\":\"ping-pong\"}", "idempotent")), 202);
            expect(wrong, c.call(new Curl("POST", "/api/v1/jobs", Map.of("Content-Type", "application/json",
                    "Idempotency-Key", "readme-1"), "{\"template\":\"ping-pong\"}", "replayed")), 202);
            expect(wrong, c.call(new Curl("POST", "/api/v1/jobs", Map.of("Content-Type", "application/json",
                    "Idempotency-Key", "readme-1"), "{\"template\":\"pipeline\"}", "other body")), 409);
            Answer cancel = c.call("DELETE", "/api/v1/jobs/" + slow, null);
            expect(wrong, cancel, cancel.status() == 200 || cancel.status() == 202, "DELETE a running job");
            awaitFinal(c, slow);
            expect(wrong, c.call("DELETE", "/api/v1/jobs/" + slow, null), 409);
            expect(wrong, c.call("POST", "/api/v1/jobs/" + slow + "/retry", null), 202);
            expect(wrong, c.call("POST", "/api/v1/jobs/" + job + "/retry", null), 409);
            c.call("DELETE", "/api/v1/jobs/" + slow, null);
            expect(wrong, c.call("GET", "/api/v1/workloads", null), 200);

            // README's two-step workflow: B waits for A (state waiting, then its after chain with states), and batches.
            String head = submit(c, wrong, "{\"workload\":{\"steps\":[{\"op\":\"sleep\",\"ms\":500}]}}");
            Answer waits = c.call("POST", "/api/v1/jobs", "{\"workload\":{\"steps\":[{\"op\":\"result\",\"of\":\"" + head
                    + "\"}]},\"after\":[\"" + head + "\"]}");
            expect(wrong, waits, 202);
            assertThat(waits.body()).contains("\"state\":\"waiting\"");
            String next = JSON.readTree(waits.body()).get("id").asString();
            expect(wrong, c.call("GET", "/api/v1/jobs/" + next, null), 200);
            expect(wrong, c.call("GET", "/api/v1/jobs?state=waiting", null), 200);
            expect(wrong, awaitFinal(c, next), 200);
            expect(wrong, c.call("POST", "/api/v1/jobs", "{\"workload\":{\"steps\":[{\"op\":\"yield\"}]},\"after\":[\"no-such-job\"]}"),
                    422);
            Answer batch = c.call("POST", "/api/v1/jobs/batch", "{\"jobs\":[{\"key\":\"a\",\"workload\":{\"steps\":[{\"op\":\"yield\"}]}},"
                    + "{\"key\":\"b\",\"after\":[\"a\"],\"template\":\"ping-pong\"}]}");
            expect(wrong, batch, 202);
            assertThat(JSON.readTree(batch.body()).get("ids")).hasSize(2);
            expect(wrong, c.call("POST", "/api/v1/jobs/batch", "{\"jobs\":[{\"key\":\"a\",\"after\":[\"a\"],"
                    + "\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}]}"), 422);

            expect(wrong, c.call("POST", "/api/v1/channels", "{\"name\":\"contract\",\"capacity\":4}"), 201);
            expect(wrong, c.call("POST", "/api/v1/channels", "{\"name\":\"contract\",\"capacity\":4}"), 409);
            expect(wrong, c.call("POST", "/api/v1/channels", "{\"name\":\"bad name!\"}"), 422);
            for (String value : List.of("42", "\"text\"", "[true,1.5]", "{\"n\":{\"m\":[1,\"two\",null]}}", "null")) {
                expect(wrong, c.call("POST", "/api/v1/channels/contract/send", "{\"value\":" + value + ",\"timeoutMs\":1000}"), 200);
                Answer r = c.call("POST", "/api/v1/channels/contract/recv", "{\"timeoutMs\":1000}");
                expect(wrong, r, 200);
                assertThat(JSON.readTree(r.body()).get("value")).as("received " + value).isEqualTo(JSON.readTree(value));
            }
            Answer timedOut = c.call("POST", "/api/v1/channels/contract/recv", "{\"timeoutMs\":10}");
            expect(wrong, timedOut, 200);
            assertThat(timedOut.body()).contains("\"received\":false").contains("timeout");
            expect(wrong, c.call("GET", "/api/v1/channels", null), 200);
            expect(wrong, c.call("GET", "/api/v1/channels/contract", null), 200);
            expect(wrong, c.call("GET", "/api/v1/channels/nothing-here", null), 404);
            // The document says a send's value is required (any JSON, null included): Prism refuses it first.
            refused(wrong, c, service, "POST", "/api/v1/channels/contract/send", "{\"timeoutMs\":10}", 422);
            expect(wrong, c.call("POST", "/api/v1/channels/contract/close", null), 200);
            expect(wrong, c.call("POST", "/api/v1/channels/contract/close", null), 409);
            expect(wrong, c.call("POST", "/api/v1/channels/contract/send", "{\"value\":1}"), 409);
            Answer drained = c.call("POST", "/api/v1/channels/contract/recv", null);
            expect(wrong, drained, 200);
            assertThat(drained.body()).contains("\"ok\":false");
            expect(wrong, c.call("DELETE", "/api/v1/channels/contract", null), 204);

            expect(wrong, c.call("GET", "/api/v1/scheduler", null), 200);
            expect(wrong, c.call("PUT", "/api/v1/scheduler/gomaxprocs", "{\"gomaxprocs\":2}"), 200);
            refused(wrong, c, service, "PUT", "/api/v1/scheduler/gomaxprocs", "{\"gomaxprocs\":0}", 422);
            expect(wrong, c.call("GET", "/api/v1/scheduler/schedtrace", null), 200);
            expect(wrong, c.call("GET", "/api/v1/scheduler/schedtrace?detail=true", null), 200);
            expect(wrong, c.call("GET", "/api/v1/limits", null), 200);
            expect(wrong, c.call("GET", "/api/v1/handlers", null), 200); // the starter's: none in the stand-alone service
            expect(wrong, c.call("GET", "/api/v1/debug/goroutines", null), 200);
            expect(wrong, c.call(new Curl("GET", "/api/v1/debug/goroutines", Map.of("Accept", "text/plain"), null, "dump as text")), 200);
            expect(wrong, c.call("GET", "/api/v1/debug/goroutines/leaked", null), 200);
            expect(wrong, c.call("GET", "/api/v1/trace?seconds=1", null), 200);
            refused(wrong, c, service, "GET", "/api/v1/trace?seconds=99", null, 422);
            expect(wrong, c.call("GET", "/api/v1/trace/flight", null), 200);
            expect(wrong, c.call("GET", "/api/v1/trace/flight/snapshots", null), 200);
            expect(wrong, c.call("GET", "/api/v1/trace/flight/snapshots/none", null), 404);
            // A kept snapshot: what a leak or a panic makes the recorder keep, asked for directly here.
            flight.trigger("contract", "asked by the contract test");
            String href = null;
            for (int i = 0; i < 200 && href == null; i++) {
                JsonNode list = JSON.readTree(c.call("GET", "/api/v1/trace/flight/snapshots", null).body()).get("snapshots");
                href = list.isEmpty() ? null : list.get(0).get("href").asString();
                Thread.sleep(href == null ? 50 : 0);
            }
            assertThat(href).as("a kept snapshot").isNotNull();
            expect(wrong, c.call("GET", href, null), 200);

            assertThat(wrong).as("calls whose request or answer the served document does not describe (Prism's log: %s)",
                    tail(prism.log())).isEmpty();
            assertThat(uncalled(service, c.answers)).as("operations of the document no call reached with a 2xx").isEmpty();
            assertThat(securityMismatches(service)).as("operations whose declared security is not what the service asked of these calls")
                    .isEmpty();
        }
    }

    private static String submit(Caller c, List<String> wrong, String body) throws Exception {
        Answer a = c.call("POST", "/api/v1/jobs", body);
        expect(wrong, a, 202);
        return JSON.readTree(a.body()).get("id").asString();
    }

    /** Polls the result (through the proxy: each poll is checked too) until the job is final. */
    private static Answer awaitFinal(Caller c, String id) throws Exception {
        for (int i = 0; i < 600; i++) {
            Answer a = c.call("GET", "/api/v1/jobs/" + id + "/result", null);
            if (a.status() != 202) {
                return a;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("job " + id + " still not final after 600 polls");
    }

    /**
     * A request the document itself rules out (a value outside its enum or range): Prism refuses it
     * without forwarding it, naming the rule (the document tells a client before the service does);
     * straight to the service, it is answered {@code status} with a problem.
     */
    private void refused(List<String> wrong, Caller c, URI service, String method, String path, String body, int status)
            throws Exception {
        Answer viaPrism = c.call(method, path, body);
        if (!(viaPrism.status() == 422 && viaPrism.body().contains("UNPROCESSABLE_ENTITY"))) {
            expect(wrong, viaPrism, status);
        }
        Answer direct = new Caller(service, token()).call(method, path, body);
        if (direct.status() != status || !direct.contentType().startsWith("application/problem+json")) {
            wrong.add(method + " " + path + " straight to the service -> " + direct.status() + " " + direct.contentType()
                    + " (expected " + status + " with a problem): " + direct.body());
        }
    }

    private static void expect(List<String> wrong, Answer a, int status) {
        expect(wrong, a, a.status() == status, "expected " + status);
    }

    private static void expect(List<String> wrong, Answer a, boolean statusOk, String what) {
        if (a.mismatch()) {
            wrong.add(a.call() + " -> " + a.status() + ": " + a.violations());
        } else if (!statusOk) {
            wrong.add(a.call() + " -> " + a.status() + " (" + what + "): " + a.body());
        }
    }

    /** Operations of the served document (method and path template) that no answer in {@code answers} hit with a 2xx. */
    private static Set<String> uncalled(URI service, List<Answer> answers) throws Exception {
        HttpResponse<String> doc = HttpClient.newHttpClient().send(HttpRequest.newBuilder(service.resolve("/v3/api-docs")).build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode paths = JSON.readTree(doc.body()).get("paths");
        Set<String> missing = new LinkedHashSet<>();
        for (String path : paths.propertyNames()) {
            Pattern p = Pattern.compile(path.replaceAll("\\{[^}]+}", "[^/?]+") + "(\\?.*)?");
            for (String method : paths.get(path).propertyNames()) {
                String m = method.toUpperCase(java.util.Locale.ROOT);
                boolean hit = answers.stream().anyMatch(a -> a.status() / 100 == 2 && a.call().startsWith(m + " ")
                        && p.matcher(a.call().substring(m.length() + 1)).matches());
                if (!hit && !path.equals("/api/v1/telemetry/stream")) {
                    missing.add(m + " " + path + " (" + paths.get(path).get(method).path("operationId").asString() + ")");
                }
            }
        }
        return missing;
    }

    /**
     * Prism's proxy does not check credentials, so the security the document declares is held to the
     * service here: open, the calls above succeeded with none, so no operation may ask for any; with a
     * token, every operation must ask for it, and the service must refuse a call without it (401).
     */
    private List<String> securityMismatches(URI service) throws Exception {
        HttpResponse<String> doc = HttpClient.newHttpClient().send(HttpRequest.newBuilder(service.resolve("/v3/api-docs")).build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode paths = JSON.readTree(doc.body()).get("paths");
        List<String> wrong = new ArrayList<>();
        for (String path : paths.propertyNames()) {
            for (String method : paths.get(path).propertyNames()) {
                JsonNode op = paths.get(path).get(method);
                boolean declared = !op.path("security").isEmpty();
                if (declared != (token() != null)) {
                    wrong.add(method + " " + path + " declares " + op.path("security"));
                }
            }
        }
        if (token() != null) {
            int status = new Caller(service, null).call("GET", "/api/v1/jobs", null).status();
            if (status != 401) {
                wrong.add("GET /api/v1/jobs without the token answered " + status + ", not 401");
            }
        }
        return wrong;
    }

    private static String tail(String log) {
        return log.length() > 4000 ? log.substring(log.length() - 4000) : log;
    }
}
