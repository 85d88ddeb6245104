package io.gosched.web.errors;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every error a user can cause, through the whole service on its real server (Netty included, for
 * 414 and 431): request, then the status, the problem type and a phrase of the detail that says
 * what was wrong or what to send instead. Every answer is {@code application/problem+json} with
 * type, title, status and detail, and never a stack trace or a framework's class or method name.
 *
 * <p>Placeholders in a body or path: {@code DEEP} 3,000 nested arrays, {@code BIG} 3 MB,
 * {@code LONG} 70,000 characters; a header {@code X-Big: LONG}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputTableTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String DEEP = "[".repeat(3000) + "]".repeat(3000);
    static final String LONG = "a".repeat(70_000);
    static final String BIG = "{\"name\":\"" + "a".repeat(3_000_000) + "\"}";

    @LocalServerPort
    int port;

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    void aChannelNamedC() throws Exception {
        send("POST", "/api/v1/channels", "application/json", "{\"name\":\"c\",\"capacity\":1}", null);
    }

    @ParameterizedTest(name = "{0} {1} [{2}] {3} -> {5} {6}")
    @CsvSource(delimiter = '|', nullValues = "-", maxCharsPerColumn = 10_000, textBlock = """
            GET    | /api/v1/nothing                        | -                    | -                                          | -                | 404 | not-found                       | nothing is at /api/v1/nothing: the API's operations are listed at /v3/api-docs
            GET    | /nothing                               | -                    | -                                          | -                | 404 | not-found                       | listed at /v3/api-docs
            PATCH  | /api/v1/jobs                           | application/json     | {}                                         | -                | 405 | method-not-allowed              | PATCH is not allowed on /api/v1/jobs: use GET or POST
            DELETE | /api/v1/channels                       | -                    | -                                          | -                | 405 | method-not-allowed              | use GET or POST
            PUT    | /api/v1/jobs/x/retry                   | -                    | -                                          | -                | 405 | method-not-allowed              | use POST
            GET    | /api/v1/jobs                           | -                    | -                                          | application/xml  | 406 | not-acceptable                  | send Accept: application/json
            POST   | /api/v1/jobs                           | application/json     | BIG                                        | -                | 413 | payload-too-large               | larger than the limit of
            GET    | /api/v1/jobs?x=LONG                    | -                    | -                                          | -                | 414 | uri-too-long                    | send a shorter URL
            GET    | /api/v1/jobs                           | -                    | -                                          | X-Big            | 431 | request-header-fields-too-large | send fewer or shorter headers
            POST   | /api/v1/jobs                           | text/plain           | {}                                         | -                | 415 | unsupported-media-type          | send it as application/json
            POST   | /api/v1/channels                       | application/x-www-form-urlencoded | a=b                           | -                | 415 | unsupported-media-type          | Content-Type application/x-www-form-urlencoded is not read here: send it as application/json
            POST   | /api/v1/channels/c/send                | application/x-www-form-urlencoded | value=1                       | -                | 415 | unsupported-media-type          | send it as application/json
            POST   | /api/v1/jobs                           | -                    | {}                                         | -                | 415 | unsupported-media-type          | no Content-Type: send it as application/json
            POST   | /api/v1/channels                       | application/json     | -                                          | -                | 400 | malformed-request               | the request has no body: send a JSON object
            POST   | /api/v1/jobs                           | application/json     | -                                          | -                | 400 | malformed-request               | the request has no body
            PUT    | /api/v1/scheduler/gomaxprocs           | application/json     | -                                          | -                | 400 | malformed-request               | the request has no body
            POST   | /api/v1/channels                       | application/json     | {"name":"x",                               | -                | 400 | malformed-request               | the body ends at line 1, column 13 before its JSON does
            POST   | /api/v1/jobs                           | application/json     | {"template":                               | -                | 400 | malformed-request               | before its JSON does
            POST   | /api/v1/jobs                           | application/json     | {"template" "x"}                           | -                | 400 | malformed-request               | malformed JSON at line 1
            POST   | /api/v1/channels/c/send                | application/json     | {"value":tru}                              | -                | 400 | malformed-request               | malformed JSON at line 1
            POST   | /api/v1/channels                       | application/json     | {"name":"o","capacity":99999999999999999999999} | -           | 422 | invalid-request                 | at most 2147483647), was 99999999999999999999999
            POST   | /api/v1/channels/c/send                | application/json     | {"value":1,"timeoutMs":99999999999999999999999} | -           | 422 | invalid-request                 | at most 9223372036854775807), was 99999999999999999999999
            POST   | /api/v1/jobs                           | application/json     | {"template":"ping-pong","timeoutMs":99999999999999999999999} | - | 422 | invalid-request          | an integer here is at most 9223372036854775807
            POST   | /api/v1/jobs                           | application/json     | DEEP                                       | -                | 400 | malformed-request               | nests arrays and objects 501 deep, more than the 500 allowed
            POST   | /api/v1/channels/c/send                | application/json     | {"value":DEEP}                             | -                | 400 | malformed-request               | more than the 500 allowed
            GET    | /api/v1/jobs?name=x&bogus=1            | -                    | -                                          | -                | 422 | invalid-request                 | is not a parameter of this operation: it reads state, template, name, submittedAfter, submittedBefore, page, size
            GET    | /api/v1/channels?state=open            | -                    | -                                          | -                | 422 | invalid-request                 | is not a parameter of this operation: it takes none
            GET    | /api/v1/workloads?name=x               | -                    | -                                          | -                | 422 | invalid-request                 | it takes none
            GET    | /api/v1/debug/goroutines?jobs=1        | -                    | -                                          | -                | 422 | invalid-request                 | it reads format, state, label, job, limit
            GET    | /api/v1/debug/goroutines/leaked?all=1  | -                    | -                                          | -                | 422 | invalid-request                 | it takes none
            GET    | /api/v1/trace/flight/snapshots?n=1     | -                    | -                                          | -                | 422 | invalid-request                 | it takes none
            GET    | /api/v1/jobs?state=finished            | -                    | -                                          | -                | 422 | invalid-request                 | must be one of queued, running, succeeded, failed, cancelled, timed_out, waiting, was 'finished'
            GET    | /api/v1/jobs?page=-1                   | -                    | -                                          | -                | 422 | invalid-request                 | greater than or equal to 0
            GET    | /api/v1/jobs?size=abc                  | -                    | -                                          | -                | 400 | malformed-request               | size must be an integer, was 'abc'
            GET    | /api/v1/jobs?submittedAfter=yesterday  | -                    | -                                          | -                | 400 | malformed-request               | submittedAfter must be an RFC 3339 instant such as 2026-01-02T03:04:05Z
            GET    | /api/v1/jobs/no-such-job               | -                    | -                                          | -                | 404 | not-found                       | no-such-job
            GET    | /api/v1/jobs/no-such-job/result        | -                    | -                                          | -                | 404 | not-found                       | no-such-job
            DELETE | /api/v1/jobs/no-such-job               | -                    | -                                          | -                | 404 | not-found                       | no-such-job
            POST   | /api/v1/jobs/no-such-job/retry         | -                    | -                                          | -                | 404 | not-found                       | no-such-job
            POST   | /api/v1/jobs                           | application/json     | {}                                         | -                | 422 | invalid-request                 | needs exactly one of 'workload'
            POST   | /api/v1/jobs                           | application/json     | []                                         | -                | 422 | invalid-request                 | must be a JSON object, was an array
            POST   | /api/v1/jobs                           | application/json     | {"template":"no-such"}                     | -                | 422 | invalid-request                 | unknown template 'no-such' (see GET /api/v1/workloads)
            POST   | /api/v1/jobs                           | application/json     | {"template":"ping-pong","colour":1}        | -                | 422 | invalid-request                 | unknown field
            POST   | /api/v1/jobs                           | application/json     | {"workload":{"steps":[{"op":"fly"}]}}      | -                | 422 | invalid-request                 | unknown op
            POST   | /api/v1/jobs                           | application/json     | {"template":"ping-pong","priority":10}     | -                | 422 | invalid-request                 | between 0 and 9
            POST   | /api/v1/jobs                           | application/json     | {"template":"ping-pong","notBefore":"soon"} | -               | 422 | invalid-request                 | must be an RFC 3339 instant
            POST   | /api/v1/channels                       | application/json     | {"name":"bad name!"}                       | -                | 422 | invalid-request                 | must match
            POST   | /api/v1/channels                       | application/json     | {"capacity":1}                             | -                | 422 | invalid-request                 | must not be null
            POST   | /api/v1/channels/c/send                | application/json     | {"timeoutMs":1}                            | -                | 422 | invalid-request                 | is required (any JSON value, null included)
            POST   | /api/v1/channels/c/send                | application/json     | {"value":1,"timeoutMs":-1}                 | -                | 422 | invalid-request                 | must be between 0 and
            GET    | /api/v1/channels/no-such               | -                    | -                                          | -                | 404 | not-found                       | no-such
            POST   | /api/v1/channels/no-such/recv          | application/json     | {"timeoutMs":1}                            | -                | 404 | not-found                       | no-such
            PUT    | /api/v1/scheduler/gomaxprocs           | application/json     | {"gomaxprocs":0}                           | -                | 422 | invalid-request                 | greater than or equal to 1
            PUT    | /api/v1/scheduler/gomaxprocs           | application/json     | {"gomaxprocs":"two"}                       | -                | 400 | malformed-request               | /gomaxprocs
            GET    | /api/v1/trace?seconds=99               | -                    | -                                          | -                | 422 | invalid-request                 | seconds
            GET    | /api/v1/trace/flight/snapshots/999     | -                    | -                                          | -                | 404 | flight-snapshot-not-found       | 999
            GET    | /api/v1/jobs/%2e%2e/result             | -                    | -                                          | -                | 400 | rejected-request                | rejected
            """)
    void aBadRequestIsAProblemSayingWhatWasWrong(String method, String path, String contentType, String body, String extra,
            int status, String type, String phrase) throws Exception {
        HttpResponse<String> r = send(method, path.replace("LONG", LONG), contentType,
                body == null ? null : body.equals("BIG") ? BIG : body.replace("DEEP", DEEP), extra);
        assertThat(r.statusCode()).as("status; body %s", r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).as("content type").startsWith("application/problem+json");
        JsonNode p = JSON.readTree(r.body());
        assertThat(p.path("type").asString()).isEqualTo("urn:gosched:problem:" + type);
        assertThat(p.path("status").asInt()).isEqualTo(status);
        assertThat(p.path("title").asString()).isNotBlank();
        assertThat(p.path("detail").asString()).as("detail").contains(phrase);
        assertThat(r.body()).as("no class, method or trace of the framework")
                .doesNotContain("Exception").doesNotContain("tools.jackson").doesNotContain("springframework")
                .doesNotContain("static resource").doesNotContain("()`").doesNotContain("\tat ");
    }

    private HttpResponse<String> send(String method, String path, String contentType, String body, String extra) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        if ("X-Big".equals(extra)) {
            b.header("X-Big", LONG);
        } else if (extra != null) {
            b.header("Accept", extra);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
