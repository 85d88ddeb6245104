package io.gosched.web.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The names generated clients are built from are a contract: every operation's operationId, the
 * eight tags, no schema named after a framework type; and the security the document declares is
 * the configured mode's: none when open, the bearer token (with the scopes each call needs) with a
 * static token.
 */
class OpenApiNamesTest {

    static final List<String> OPERATION_IDS = List.of("submitJob", "getJob", "listJobs", "cancelJob", "retryJob", "getJobResult",
            "streamJobEvents", "listJobGoroutines", "createChannel", "getChannel", "listChannels", "sendToChannel",
            "receiveFromChannel", "closeChannel", "deleteChannel", "selectChannels", "getScheduler", "setGomaxprocs", "getSchedtrace",
            "streamTelemetry", "listWorkloads", "getLimits", "listGoroutines", "listLeakedGoroutines", "getFlightTrace",
            "listFlightSnapshots", "getFlightSnapshot", "recordTrace",
            "createSchedule", "listSchedules", "getSchedule", "replaceSchedule", "deleteSchedule", "pauseSchedule", "resumeSchedule",
            "triggerSchedule", "submitJobBatch", "listHandlers");
    static final Set<String> TAGS = Set.of("Jobs", "Channels", "Scheduler", "Workloads", "Limits", "Debug", "Trace",
            "Schedules");

    static JsonNode document(int port) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/v3/api-docs")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return JsonMapper.builder().build().readTree(r.body());
    }

    static List<JsonNode> operations(JsonNode doc) {
        List<JsonNode> ops = new ArrayList<>();
        doc.get("paths").forEach(item -> item.forEach(ops::add));
        return ops;
    }

    @Nested
    @SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
    class Open {
        @LocalServerPort
        int port;

        @Test
        void operationIdsTagsAndNoSecurity() throws Exception {
            JsonNode doc = document(port);
            List<String> ids = operations(doc).stream().map(op -> op.path("operationId").asString()).toList();
            assertThat(ids).containsExactlyInAnyOrderElementsOf(OPERATION_IDS);
            Set<String> tags = new TreeSet<>();
            operations(doc).forEach(op -> op.path("tags").forEach(t -> tags.add(t.asString())));
            assertThat(TAGS).containsAll(tags);
            assertThat(tags).containsExactlyInAnyOrderElementsOf(TAGS);
            assertThat(doc.path("components").path("schemas").propertyNames())
                    .noneMatch(n -> n.equals("JsonNode") || n.startsWith("ServerSentEvent") || n.startsWith("Flux") || n.startsWith("Mono"));
            assertThat(doc.path("components").path("securitySchemes").isMissingNode()
                    || doc.path("components").path("securitySchemes").isEmpty()).as("no security scheme when open").isTrue();
            for (JsonNode op : operations(doc)) {
                assertThat(op.path("security").isEmpty()).as("%s needs no credentials", op.path("operationId").asString()).isTrue();
                assertThat(op.path("responses").has("401")).as("%s answers no 401 when open", op.path("operationId").asString()).isFalse();
            }
        }
    }

    @Nested
    @SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "gosched.api.token=names-token-0123456789")
    class WithToken {
        @LocalServerPort
        int port;

        @Test
        void everyOperationNeedsTheBearerToken() throws Exception {
            JsonNode doc = document(port);
            assertThat(doc.path("components").path("securitySchemes").propertyNames()).containsExactly("bearerToken");
            for (JsonNode op : operations(doc)) {
                String id = op.path("operationId").asString();
                assertThat(op.path("security")).as(id).isNotEmpty().allSatisfy(requirement ->
                        assertThat(requirement.propertyNames()).as(id).containsExactly("bearerToken"));
                assertThat(op.path("responses").has("401")).isTrue();
            }
            // With the scopes each needs: what a JWT would have to hold (the static token holds them all).
            JsonNode submit = doc.path("paths").path("/api/v1/jobs").path("post").path("security");
            assertThat(submit.toString()).isEqualTo("[{\"bearerToken\":[\"jobs:write\"]}]");
            assertThat(doc.path("paths").path("/api/v1/channels/{name}/send").path("post").path("security").toString())
                    .isEqualTo("[{\"bearerToken\":[\"channels:write\"]}]");
        }
    }
}
