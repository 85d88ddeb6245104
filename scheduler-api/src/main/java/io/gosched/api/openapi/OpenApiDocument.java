package io.gosched.api.openapi;

import java.net.URI;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;

import io.gosched.api.error.ApiProblem;
import io.gosched.api.security.AccessRules;
import io.gosched.api.security.ApiScope;
import io.gosched.api.security.SecurityMode;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.media.ArraySchema;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.OAuthFlow;
import io.swagger.v3.oas.models.security.OAuthFlows;
import io.swagger.v3.oas.models.security.Scopes;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import io.swagger.v3.oas.models.servers.Server;
import org.springdoc.core.customizers.OpenApiCustomizer;

import org.springframework.http.HttpMethod;

/**
 * What the served OpenAPI document says beyond what springdoc reads off the controllers: the
 * security scheme of the configured {@link SecurityMode} (none when open, the static bearer token,
 * or OAuth2 with the {@link ApiScope}s), each operation's requirement taken from {@link AccessRules}
 * (the table the filter chain enforces, so the two cannot disagree), every error an operation can
 * answer, each as {@code application/problem+json} with one {@code Problem} schema, and the schema
 * corrections of {@link JsonSchemas} (any-JSON values, nulls, SSE, no framework type names).
 *
 * <p>Errors every operation can give are added here: 400 (malformed request, a URL the firewall
 * refuses), 401 and 403 where credentials are needed (never when open), 404 where the path names a
 * resource, 406, 413, 415 and 422 where there is a body, 414 and 431 (Netty's limits), 500, and
 * 503 (shutting down, or the identity provider out of reach). Errors particular to one operation (409, 429, ...) are declared on its
 * controller method with {@code @ApiResponse}; this class gives them the problem body.
 */
public final class OpenApiDocument implements OpenApiCustomizer {

    public static final String BEARER_SCHEME = "bearerToken";
    public static final String OAUTH2_SCHEME = "oauth2";
    static final String PROBLEM_SCHEMA = "Problem";
    static final String PROBLEM_JSON = "application/problem+json";
    /** RFC 2606's reserved .invalid: an address that cannot be mistaken for a real endpoint. */
    static final URI UNSET_TOKEN_URL = URI.create("https://identity-provider.invalid/oauth2/token");

    /** The shared error responses: status, component name, description. */
    private record Common(String status, String name, String description) {}

    private static final List<Common> COMMON = List.of(
            new Common("400", "BadRequest", "Malformed request (unreadable body, a parameter of the wrong type), or a URL the "
                    + "firewall refuses (an encoded / or ., a ; parameter, //, . or .. segments): rejected-request"),
            new Common("401", "Unauthorized", "No credentials (unauthorized) or a token that is not valid (invalid-token); "
                    + "WWW-Authenticate carries the RFC 6750 challenge"),
            new Common("403", "Forbidden", "The token lacks the scope this call needs (insufficient-scope); the body's scopes "
                    + "names the scopes in question and detail says which are needed"),
            new Common("404", "NotFound", "No such resource (not-found)"),
            new Common("406", "NotAcceptable", "The Accept header names no media type this operation produces"),
            new Common("414", "UriTooLong", "The request line is longer than the server reads (uri-too-long)"),
            new Common("431", "HeaderFieldsTooLarge", "The header fields are larger than the server reads "
                    + "(request-header-fields-too-large)"),
            new Common("413", "ContentTooLarge", "The body is larger than gosched.api.limits.max-body-bytes (payload-too-large)"),
            new Common("415", "UnsupportedMediaType", "The body is not application/json"),
            new Common("422", "UnprocessableContent", "The request is well-formed but invalid (invalid-request); errors names "
                    + "each field by JSON pointer"),
            new Common("500", "InternalError", "A bug of the service (internal); never carries a stack trace"),
            new Common("503", "ServiceUnavailable", "Shutting down (shutting-down), or the identity provider's keys cannot be "
                    + "fetched (identity-provider-unavailable); Retry-After says when to try again"));

    private final AccessRules rules;
    private final URI tokenUrl;
    private final SecurityMode mode;

    /**
     * @param rules     the table the filter chain enforces
     * @param tokenUrl  the identity provider's token endpoint for the OAuth2 scheme; null: a placeholder
     * @param mode      how callers authenticate: the document declares that scheme only, and none when open
     */
    public OpenApiDocument(AccessRules rules, URI tokenUrl, SecurityMode mode) {
        this.rules = rules;
        this.tokenUrl = tokenUrl;
        this.mode = mode;
    }

    @Override
    public void customise(OpenAPI api) {
        api.info(new Info().title("gosched").version("v1")
                .description("Go's goroutine scheduler on the JVM as a service: jobs (a workload DSL run as goroutines), "
                        + "named channels, scheduler control and telemetry. Errors are RFC 9457 problem details whose "
                        + "type is urn:gosched:problem:<kind>. " + switch (mode) {
                            case OPEN -> "This service runs open: no call needs credentials (set gosched.api.token, or "
                                    + "an identity provider, to require a bearer token).";
                            case STATIC_TOKEN -> "Every call under /api needs the static bearer token of gosched.api.token "
                                    + "(it holds every scope).";
                            case JWT -> "Every call under /api needs a JWT from the identity provider with the scopes below, "
                                    + "sent as a bearer token.";
                        }));
        // Relative: the API is where this document is, whatever host or proxy served it.
        api.servers(List.of(new Server().url("/").description("this service")));
        Components components = api.getComponents() == null ? new Components() : api.getComponents();
        api.components(components);
        // Only the scheme this service accepts: a client generated from the document, or a validating
        // proxy in front of it, must not be told to send credentials the service would not look at.
        switch (mode) {
            case OPEN -> {
            }
            case STATIC_TOKEN -> components.addSecuritySchemes(BEARER_SCHEME, new SecurityScheme().type(SecurityScheme.Type.HTTP)
                    .scheme("bearer").description("The configured token (gosched.api.token). It holds every scope."));
            case JWT -> {
                Scopes scopes = new Scopes();
                for (ApiScope s : ApiScope.values()) {
                    scopes.addString(s.value(), s.description());
                }
                components.addSecuritySchemes(OAUTH2_SCHEME, new SecurityScheme().type(SecurityScheme.Type.OAUTH2)
                        .description("An access token (JWT) of the identity provider, sent as a bearer token; its scope (or "
                                + "scp) claim holds the scopes. The service issues no tokens; "
                                + (tokenUrl == null ? "set gosched.api.security.token-url to name the provider's token endpoint here."
                                        : "get one from the token endpoint below."))
                        .flows(new OAuthFlows().clientCredentials(new OAuthFlow()
                                .tokenUrl((tokenUrl == null ? UNSET_TOKEN_URL : tokenUrl).toString()).scopes(scopes))));
            }
        }
        components.addSchemas(PROBLEM_SCHEMA, problemSchema());
        for (Common c : COMMON) {
            if (mode != SecurityMode.OPEN || !(c.status().equals("401") || c.status().equals("403"))) {
                components.addResponses(c.name(), problemResponse(c.description(), c.status()));
            }
        }
        JsonSchemas.tellTheTruth(api);
        if (api.getPaths() == null) {
            return;
        }
        api.getPaths().forEach((path, item) -> item.readOperationsMap().forEach((method, op) ->
                document(HttpMethod.valueOf(method.name()), path, op)));
    }

    private void document(HttpMethod method, String path, Operation op) {
        AccessRules.Access access = rules.accessFor(method, sample(path));
        op.setSecurity(mode == SecurityMode.OPEN ? List.of() : requirements(access, mode));
        ApiResponses responses = op.getResponses() == null ? new ApiResponses() : op.getResponses();
        op.setResponses(responses);
        boolean body = op.getRequestBody() != null;
        for (Common c : COMMON) {
            boolean applies = switch (c.status()) {
                case "401" -> mode != SecurityMode.OPEN && access.kind() != AccessRules.Access.Kind.PUBLIC;
                case "403" -> mode != SecurityMode.OPEN && access.kind() == AccessRules.Access.Kind.SCOPE;
                case "503" -> access.kind() != AccessRules.Access.Kind.PUBLIC;
                case "404" -> path.contains("{");
                case "413", "415", "422" -> body;
                default -> true;
            };
            if (applies && !responses.containsKey(c.status())) {
                responses.addApiResponse(c.status(), new ApiResponse().$ref("#/components/responses/" + c.name()));
            }
        }
        // Errors declared on the controller method: their bodies are problem details too.
        responses.forEach((status, response) -> {
            if (response.get$ref() == null && (status.startsWith("4") || status.startsWith("5"))) {
                response.setContent(new Content().addMediaType(PROBLEM_JSON,
                        new MediaType().schema(new Schema<>().$ref("#/components/schemas/" + PROBLEM_SCHEMA))));
            }
        });
    }

    /**
     * The requirement in a mode with credentials: none for public reads; else the mode's scheme
     * with one of the ways of holding the scopes needed: the static token (which holds every scope;
     * OpenAPI 3.1 lets a bearer requirement name them too, so a reader sees what the call needs) or a
     * JWT.
     */
    static List<SecurityRequirement> requirements(AccessRules.Access access, SecurityMode mode) {
        List<SecurityRequirement> out = new ArrayList<>();
        String scheme = mode == SecurityMode.STATIC_TOKEN ? BEARER_SCHEME : OAUTH2_SCHEME;
        switch (access.kind()) {
            case PUBLIC -> {
                // An empty list: this operation needs no credentials.
            }
            case AUTHENTICATED -> out.add(new SecurityRequirement().addList(scheme));
            case SCOPE -> {
                // OpenAPI lists alternatives, each with every scope it needs: one per way of taking
                // a scope from every set of the access.
                List<List<String>> ways = List.of(List.of());
                for (Set<ApiScope> set : access.allOf()) {
                    List<List<String>> next = new ArrayList<>();
                    for (List<String> way : ways) {
                        for (ApiScope s : EnumSet.copyOf(set)) {
                            List<String> longer = new ArrayList<>(way);
                            if (!longer.contains(s.value())) {
                                longer.add(s.value());
                            }
                            next.add(longer);
                        }
                    }
                    ways = next;
                }
                ways.stream().distinct().forEach(way -> out.add(new SecurityRequirement().addList(scheme, way)));
            }
        }
        return out;
    }

    /** An OpenAPI path with each {@code {variable}} replaced by a plain segment, to be matched as a request path. */
    static String sample(String openApiPath) {
        return openApiPath.replaceAll("\\{[^}/]+}", Matcher.quoteReplacement("x"));
    }

    private static Schema<?> problemSchema() {
        Map<String, Schema> props = new LinkedHashMap<>();
        props.put("type", new StringSchema().format("uri").description("The error class, " + ApiProblem.TYPE_BASE + "<kind>")
                .example(ApiProblem.TYPE_BASE + "invalid-request"));
        props.put("title", new StringSchema().description("A short summary of the error class"));
        props.put("status", new IntegerSchema().description("The HTTP status"));
        props.put("detail", new StringSchema().description("What went wrong with this request, for a human"));
        props.put("instance", new StringSchema().description("The request path"));
        ObjectSchema error = new ObjectSchema();
        error.addProperty("pointer", new StringSchema().description("RFC 6901 JSON pointer into the request body, or /<parameter>"));
        error.addProperty("detail", new StringSchema());
        props.put("errors", new ArraySchema().items(error).description("One entry per invalid field (400, 413, 422)"));
        ObjectSchema problem = new ObjectSchema();
        problem.setProperties(props);
        problem.setRequired(List.of("type", "title", "status"));
        problem.description("RFC 9457 problem details. Error classes may add members (scopes, retryAfterSeconds, channel, ...).");
        return problem;
    }

    private static ApiResponse problemResponse(String description, String status) {
        ApiResponse r = new ApiResponse().description(description).content(new Content().addMediaType(PROBLEM_JSON,
                new MediaType().schema(new Schema<>().$ref("#/components/schemas/" + PROBLEM_SCHEMA))));
        switch (status) {
            case "401", "403" -> r.addHeaderObject("WWW-Authenticate", new Header().description("RFC 6750 bearer challenge")
                    .schema(new StringSchema()));
            case "503" -> r.addHeaderObject("Retry-After", new Header().description("Seconds to wait").schema(new IntegerSchema()));
            default -> {
            }
        }
        return r;
    }
}
