import java.net.URI;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import org.springframework.core.ResolvableType;
import org.springframework.core.codec.DecodingException;
import org.springframework.http.MediaType;
import org.springframework.http.codec.DecoderHttpMessageReader;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ServerWebInputException;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import tools.jackson.databind.JsonNode;

/**
 * The HTTP ceiling of a job submission: bare Spring WebFlux on Reactor Netty, the stack the
 * service runs on, doing only what any submission endpoint must do. POST /api/v1/jobs decodes
 * the body into a Jackson 3 tree through WebFlux's own JSON decoder (the service's controller
 * takes the same {@code JsonNode}), checks that it names one job kind, and answers 202 with a
 * body shaped like the service's job view and a Location. No Spring Boot, no security chain, no
 * request observation, no admission or memory budget, no job engine: what the service adds on top
 * of this is what bench/http-ab.sh's ratio to this server measures.
 *
 * GET /api/v1/scheduler and GET /actuator/health answer 200 so that load scripts that check for a
 * service before they start (deploy/loadtest/wrk-bench.sh) accept this one.
 *
 * Run on the libraries of a service Boot jar (its BOOT-INF/lib extracted to DIR):
 *
 *   java -cp 'DIR/*' bench/probes/WebFluxCeiling.java PORT
 */
public class WebFluxCeiling {

    /** The kinds of job a submission may name, as the service accepts them (exactly one). */
    static final String[] KINDS = {"workload", "template", "http", "handler"};

    /** Counters of the service's job view, all zero when a job is just queued. */
    record Counters(long goroutinesSpawned, long messagesSent, long messagesReceived, long stepsRun, long liveGoroutines) {}

    /**
     * Same fields in the same order as the service's 202 for a queued job, so that the encoder
     * writes a body of the same shape and size (about 330 bytes).
     */
    record JobView(String id, String state, int priority, int attempt, int maxAttempts, long timeoutMs,
            Instant submittedAt, Instant queuedAt, Counters counters, int maxGoroutines) {}

    static final Counters NONE = new Counters(0, 0, 0, 0, 0);

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        RouterFunction<ServerResponse> routes = RouterFunctions.route()
                .GET("/api/v1/scheduler", r -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(Map.of("ceiling", true)))
                .GET("/actuator/health", r -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(Map.of("status", "UP")))
                .POST("/api/v1/jobs", WebFluxCeiling::submit)
                .build();
        // Default strategies: WebFlux picks its codecs by what is on the classpath; name the JSON
        // decoder so a run says which Jackson it measured (the service's web layer uses Jackson 3).
        HandlerStrategies strategies = HandlerStrategies.withDefaults();
        String json = strategies.messageReaders().stream()
                .filter(r -> r.canRead(ResolvableType.forClass(JsonNode.class), MediaType.APPLICATION_JSON))
                .map(r -> r instanceof DecoderHttpMessageReader<?> d
                        ? d.getDecoder().getClass().getSimpleName() : r.getClass().getSimpleName())
                .findFirst().orElse("none");
        ReactorHttpHandlerAdapter adapter = new ReactorHttpHandlerAdapter(RouterFunctions.toHttpHandler(routes, strategies));
        DisposableServer server = HttpServer.create().host("127.0.0.1").port(port).handle(adapter).bindNow();
        System.out.println("ceiling listening on 127.0.0.1:" + server.port() + " json=" + json);
        server.onDispose().block();
    }

    static Mono<ServerResponse> submit(ServerRequest request) {
        return request.bodyToMono(JsonNode.class)
                .flatMap(WebFluxCeiling::accept)
                .switchIfEmpty(Mono.defer(() -> problem(400, "malformed-request", "the body is empty")))
                .onErrorResume(e -> e instanceof ServerWebInputException || e instanceof DecodingException,
                        e -> problem(400, "malformed-request", "the body is not JSON"));
    }

    static Mono<ServerResponse> accept(JsonNode body) {
        int kinds = 0;
        for (String kind : KINDS) {
            if (body.has(kind)) {
                kinds++;
            }
        }
        // The service answers 422 here too, and 400 only for a body that is not JSON.
        if (kinds != 1 || body.has("workload") && !body.get("workload").isObject()) {
            return problem(422, "invalid-request", "needs exactly one of 'workload' (an object), 'template', 'http' or 'handler'");
        }
        String id = UUID.randomUUID().toString();
        Instant now = Instant.now();
        long timeoutMs = body.path("timeoutMs").asLong(0);
        JobView view = new JobView(id, "queued", body.path("priority").asInt(5), 0, 1, timeoutMs, now, now, NONE, 1);
        return ServerResponse.accepted().location(URI.create("/api/v1/jobs/" + id))
                .contentType(MediaType.APPLICATION_JSON).bodyValue(view);
    }

    static Mono<ServerResponse> problem(int status, String type, String detail) {
        return ServerResponse.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .bodyValue(Map.of("type", "urn:gosched:problem:" + type, "status", status, "detail", detail));
    }
}
