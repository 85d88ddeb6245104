package io.gosched.api.workload;

import io.gosched.service.workload.WorkloadTemplates;

import io.gosched.service.workload.WorkloadParser;

import java.util.List;
import java.util.Map;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** The DSL's vocabulary and the named templates, for clients building a job. */
@RestController
@RequestMapping("/api/v1/workloads")
@Tag(name = "Workloads", description = "Named workload templates and the DSL's ops")
class WorkloadController {

    /** GET /api/v1/workloads: the templates with their parameters, and the DSL's ops and limits. */
    record Catalogue(List<WorkloadTemplates.Template> templates, List<String> ops, Map<String, Object> limits) {}

    private final WorkloadTemplates templates;
    private final WorkloadParser parser;

    WorkloadController(WorkloadTemplates templates, WorkloadParser parser) {
        this.templates = templates;
        this.parser = parser;
    }

    @GetMapping
    @Operation(operationId = "listWorkloads", summary = "Templates (submit with {\"template\": name, \"params\": {...}}), DSL ops and limits")
    @io.swagger.v3.oas.annotations.responses.ApiResponse(responseCode = "200", description = "The catalogue", useReturnTypeSchema = true)
    @io.swagger.v3.oas.annotations.responses.ApiResponse(responseCode = "422",
            description = "A query parameter: this operation takes none (invalid-request)")
    Catalogue list(@io.swagger.v3.oas.annotations.Parameter(hidden = true) org.springframework.web.server.ServerWebExchange exchange) {
        io.gosched.api.error.QueryParameters.only(exchange, List.of());
        var l = parser.limits();
        return new Catalogue(templates.list(), WorkloadParser.OPS, Map.of(
                "maxDepth", l.maxDepth(), "maxSteps", l.maxSteps(), "maxGoroutinesPerJob", l.maxGoroutinesPerJob(),
                "maxComputeUs", l.maxComputeUs(), "maxHogUs", l.maxHogUs(), "maxSleepMs", l.maxSleepMs(),
                "maxSyscallMs", l.maxSyscallMs(), "maxTimes", l.maxTimes(), "maxTimeoutMs", l.maxTimeoutMs(),
                "maxBodyBytes", l.maxBodyBytes()));
    }
}
