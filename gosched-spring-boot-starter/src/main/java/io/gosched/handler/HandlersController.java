package io.gosched.handler;

import java.util.List;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.tags.Tag;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/** {@code GET /api/v1/handlers}: the application's job handlers and the JSON Schema of their arguments. */
@RestController
@Tag(name = "Jobs")
class HandlersController {

    private final JobHandlerRegistry registry;
    /** Computed at the first call, after the registry found the handlers; the same for the application's life. */
    private volatile List<HandlerView> views;

    HandlersController(JobHandlerRegistry registry) {
        this.registry = registry;
    }

    /**
     * One handler.
     *
     * @param argsSchema  JSON Schema (draft 2020-12) of the job's {@code args}, from the handler's parameter type
     */
    @Schema(name = "JobHandler", requiredProperties = {"name", "blocking", "argsSchema"})
    record HandlerView(@Schema(description = "What a job body's \"handler\" names") String name,
            @Schema(description = "Whether it runs as a blocking call (its P handed off while it blocks)") boolean blocking,
            @Schema(description = "What it does, from @JobHandler(description); absent when none", nullable = true) String description,
            @Schema(description = "JSON Schema (draft 2020-12) of the job's \"args\", read off the handler's parameter type")
            JsonNode argsSchema) {}

    @GetMapping("/api/v1/handlers")
    @Operation(operationId = "listHandlers", summary = "List the application's job handlers",
            description = "Each @JobHandler method of the application: its name (POST /api/v1/jobs {\"handler\": name, \"args\": {...}}), "
                    + "whether it blocks, and the JSON Schema of its arguments. Sorted by name; empty when the application has none.")
    List<HandlerView> handlers() {
        List<HandlerView> v = views;
        if (v == null) {
            v = registry.handlers().stream()
                    .map(h -> new HandlerView(h.name, h.blocking, h.description, ArgsSchema.of(h.argsType)))
                    .toList();
            views = v;
        }
        return v;
    }
}
