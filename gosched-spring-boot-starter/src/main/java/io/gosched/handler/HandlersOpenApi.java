package io.gosched.handler;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.swagger.v3.core.util.Json31;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.media.Schema;
import org.springdoc.core.customizers.OpenApiCustomizer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The application's handlers in the OpenAPI document: the job body's {@code handler} lists their
 * names, and its {@code args} is one of their argument schemas ({@code HandlerArgs.<name>}, the
 * same schemas {@code GET /api/v1/handlers} serves, their {@code $defs} moved to the components).
 */
final class HandlersOpenApi implements OpenApiCustomizer {

    static final String ARGS_PREFIX = "HandlerArgs.";
    private static final List<String> BODIES = List.of("JobSubmission", "JobBatchEntry");

    private final JobHandlerRegistry registry;

    HandlersOpenApi(JobHandlerRegistry registry) {
        this.registry = registry;
    }

    @Override
    @SuppressWarnings({"rawtypes", "unchecked"})
    public void customise(OpenAPI api) {
        List<HandlerMethod> handlers = registry.handlers();
        if (handlers.isEmpty() || api.getComponents() == null || api.getComponents().getSchemas() == null) {
            return;
        }
        Map<String, Schema> schemas = api.getComponents().getSchemas();
        List<Schema> argsVariants = new ArrayList<>();
        for (HandlerMethod h : handlers) {
            String name = ARGS_PREFIX + h.name;
            ObjectNode s = ArgsSchema.of(h.argsType);
            s.remove("$schema");
            JsonNode defs = s.remove("$defs");
            String prefix = "#/components/schemas/" + name + ".";
            if (defs != null) {
                for (Map.Entry<String, JsonNode> d : defs.properties()) {
                    schemas.put(name + "." + d.getKey(), toSchema(d.getValue(), prefix));
                }
            }
            Schema args = toSchema(s, prefix);
            args.setTitle(h.name);
            if (h.description != null) {
                args.setDescription(h.description);
            }
            schemas.put(name, args);
            argsVariants.add(new Schema<>().$ref("#/components/schemas/" + name));
        }
        List<String> names = handlers.stream().map(h -> h.name).toList();
        for (String body : BODIES) {
            Schema<?> b = schemas.get(body);
            if (b == null || b.getProperties() == null) {
                continue;
            }
            Schema handler = b.getProperties().get("handler");
            if (handler != null) {
                handler.setEnum(new ArrayList<>(names));
            }
            Schema args = b.getProperties().get("args");
            if (args != null) {
                args.setAnyOf(new ArrayList<>(argsVariants));
            }
        }
    }

    /** A JSON Schema node as swagger's model, its {@code #/$defs/} references pointed at {@code refPrefix}. */
    private static Schema<?> toSchema(JsonNode node, String refPrefix) {
        String json = node.toString().replace("\"#/$defs/", "\"" + refPrefix);
        try {
            return Json31.mapper().readValue(json, Schema.class);
        } catch (Exception e) {
            throw new IllegalStateException("cannot describe a handler's arguments in the OpenAPI document: " + json, e);
        }
    }
}
