package io.gosched.api.openapi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.responses.ApiResponse;

/**
 * Corrections to the schemas springdoc reads off the Java types, so that the document says what
 * the service writes (a validating proxy in front of it finds no difference) and names nothing of
 * the frameworks (a generated client has no class that clashes with a library's):
 * <ul>
 *   <li>a Jackson {@code JsonNode} (a channel's value, a job's last received value, the body of a
 *       submission) is any JSON value, {@code null} included: a schema without a type, not the
 *       bean of the node's getters springdoc would publish under the name {@code JsonNode};</li>
 *   <li>an SSE endpoint answers {@code text/event-stream}, a text; the JSON its events carry is
 *       named by {@code x-event-data} (OpenAPI 3.1 has no member for a stream's items), and no
 *       {@code ServerSentEvent...} schema is published;</li>
 *   <li>a property the service may write as {@code null} (every one it does not promise) admits
 *       {@code null}: Jackson writes a record's null component unless the record omits nulls;</li>
 *   <li>a histogram's last upper bound is {@code +Inf}, which JSON has no number for: Jackson
 *       writes the string {@code "Infinity"}.</li>
 * </ul>
 */
final class JsonSchemas {

    /** The schema names springdoc gives the framework types replaced here. */
    static final Set<String> FRAMEWORK_SCHEMAS = Set.of("JsonNode", "ObjectNode", "ArrayNode");
    static final String SSE = "text/event-stream";
    /** The extension naming what each event's data is, JSON of that schema. */
    static final String EVENT_DATA = "x-event-data";

    private JsonSchemas() {
    }

    static void tellTheTruth(OpenAPI api) {
        if (api.getComponents() == null || api.getComponents().getSchemas() == null) {
            return;
        }
        Map<String, Schema> schemas = api.getComponents().getSchemas();
        Map<String, Schema> kept = new LinkedHashMap<>();
        schemas.forEach((name, schema) -> {
            if (!FRAMEWORK_SCHEMAS.contains(name) && !name.startsWith("ServerSentEvent")) {
                kept.put(name, schema);
            }
        });
        api.getComponents().setSchemas(kept);
        if (api.getPaths() != null) {
            api.getPaths().values().forEach(item -> item.readOperations().forEach(op -> {
                if (op.getRequestBody() != null && op.getRequestBody().getContent() != null) {
                    op.getRequestBody().getContent().values().forEach(mt -> mt.setSchema(fix(mt.getSchema())));
                }
                if (op.getResponses() != null) {
                    op.getResponses().values().forEach(JsonSchemas::fixResponse);
                }
            }));
        }
        kept.forEach((name, schema) -> {
            if (!name.equals(OpenApiDocument.PROBLEM_SCHEMA)) {
                fixProperties(schema);
            }
        });
        Schema<?> histogram = kept.get("LatencyHistogram");
        if (histogram != null && histogram.getProperties() != null && histogram.getProperties().get("upperBoundsSeconds") != null) {
            Schema<?> bounds = (Schema<?>) histogram.getProperties().get("upperBoundsSeconds");
            Schema<Object> number = new Schema<>();
            number.addType("number");
            Schema<Object> inf = new Schema<>();
            inf.addType("string");
            inf.setEnum(new ArrayList<>(List.of("Infinity")));
            bounds.setItems(new Schema<>().anyOf(List.of(number, inf))
                    .description("An upper bound in seconds; the last is +Inf, written as the string \"Infinity\""));
        }
    }

    private static void fixResponse(ApiResponse response) {
        Content content = response.getContent();
        if (content == null) {
            return;
        }
        MediaType sse = content.get(SSE);
        if (sse != null) {
            Schema<?> data = eventData(sse.getSchema());
            StringSchema stream = new StringSchema();
            stream.description("A stream of server-sent events (text/event-stream); each event's data is one line of JSON"
                    + (data == null ? "" : ", as " + EVENT_DATA + " describes"));
            sse.setSchema(stream);
            if (data != null) {
                sse.addExtension(EVENT_DATA, data);
            }
        }
        content.forEach((type, mt) -> {
            if (!type.equals(SSE)) {
                mt.setSchema(fix(mt.getSchema()));
            }
        });
    }

    /** What springdoc made of {@code Flux<ServerSentEvent<T>>}: an array of ServerSentEventT; the schema of T, if it has one. */
    private static Schema<?> eventData(Schema<?> schema) {
        Schema<?> item = schema != null && schema.getItems() != null ? schema.getItems() : schema;
        String ref = item == null ? null : item.get$ref();
        if (ref != null && ref.contains("/ServerSentEvent")) {
            String t = ref.substring(ref.indexOf("/ServerSentEvent") + "/ServerSentEvent".length());
            return t.equals("String") || t.isEmpty() ? null : new Schema<>().$ref("#/components/schemas/" + t);
        }
        return null;
    }

    private static boolean isFramework(Schema<?> s) {
        if (s == null || s.get$ref() == null) {
            return false;
        }
        String ref = s.get$ref();
        return FRAMEWORK_SCHEMAS.contains(ref.substring(ref.lastIndexOf('/') + 1));
    }

    /** Any JSON value, null included: a schema with no type. */
    static Schema<Object> anyJson(String description) {
        Schema<Object> s = new Schema<>();
        s.setDescription(description);
        return s;
    }

    private static Schema<?> fix(Schema<?> s) {
        if (s == null) {
            return null;
        }
        if (isFramework(s)) {
            return anyJson("Any JSON value: a number, string, boolean, object, array or null");
        }
        if (s.getItems() != null) {
            s.setItems(fix(s.getItems()));
        }
        return s;
    }

    private static void fixProperties(Schema<?> schema) {
        if (schema.getProperties() == null) {
            return;
        }
        Set<String> required = schema.getRequired() == null ? Set.of() : new LinkedHashSet<>(schema.getRequired());
        Map<String, Schema> props = new LinkedHashMap<>();
        schema.getProperties().forEach((name, p) -> {
            Schema<?> fixed = fix(p);
            if (fixed.getItems() != null && isFramework(fixed.getItems())) {
                fixed.setItems(anyJson("Any JSON value"));
            }
            // An enum's member is written whenever its record is (a job's state): never null.
            if (!required.contains(name) && fixed.get$ref() == null && fixed.getEnum() == null && hasType(fixed)) {
                nullable(fixed);
            }
            props.put(name, fixed);
        });
        schema.setProperties(props);
    }

    private static boolean hasType(Schema<?> s) {
        return s.getType() != null || (s.getTypes() != null && !s.getTypes().isEmpty());
    }

    /** OpenAPI 3.1 (JSON Schema 2020-12): null is a type of its own. */
    private static void nullable(Schema<?> s) {
        Set<String> types = new LinkedHashSet<>();
        if (s.getTypes() != null) {
            types.addAll(s.getTypes());
        }
        if (s.getType() != null) {
            types.add(s.getType());
        }
        types.add("null");
        s.setTypes(types);
    }
}
