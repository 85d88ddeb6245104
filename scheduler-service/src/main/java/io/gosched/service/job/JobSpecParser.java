package io.gosched.service.job;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.gosched.service.job.spi.JobTicket;

import io.gosched.service.ServiceProperties;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.workload.JsonInput;
import io.gosched.service.error.Violation;
import io.gosched.service.workload.Workload;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import io.gosched.service.workload.Task;
import io.gosched.service.handler.JobHandlers;
import io.gosched.service.http.HttpJobs;
import tools.jackson.databind.JsonNode;

/**
 * Reads the body of POST /api/v1/jobs:
 * <pre>
 * { "workload": {...} | "template": NAME, "params": {...}? | "http": {...} (HttpCallParser)
 *     | "handler": NAME, "args": {...}? (JobHandlers),
 *   "timeoutMs": n?, "priority": 0..9?, "notBefore": RFC 3339 instant?, "name": string?,
 *   "retry": {"maxAttempts": n, "backoffMs": n?, "multiplier": x?}?,
 *   "after": [job id, ...]? }      (at most 100, no duplicates; that they exist is checked at admission)
 * </pre>
 * Every violation is collected with its JSON pointer. Thread-safe.
 */
final class JobSpecParser {

    private static final Set<String> FIELDS = Set.of("workload", "template", "params", "timeoutMs", "priority", "notBefore",
            "retry", "name", "after", "http", "handler", "args");
    private static final Set<String> RETRY_FIELDS = Set.of("maxAttempts", "backoffMs", "multiplier");

    private final WorkloadParser workloads;
    private final WorkloadTemplates templates;
    private final ServiceProperties.Limits limits;
    private final HttpJobs http;
    private final JobHandlers handlers;

    JobSpecParser(WorkloadParser workloads, WorkloadTemplates templates, HttpJobs http, JobHandlers handlers) {
        this.workloads = workloads;
        this.templates = templates;
        this.limits = workloads.limits();
        this.http = http;
        this.handlers = handlers;
    }

    /** @throws InvalidRequestException listing every violation */
    JobSpec parse(JsonNode body, Instant now) {
        JsonInput in = new JsonInput();
        if (!in.object(body, "")) {
            in.throwIfInvalid();
        }
        in.onlyFields(body, "", FIELDS);
        boolean hasWorkload = body.has("workload") && !body.get("workload").isNull();
        boolean hasTemplate = body.has("template") && !body.get("template").isNull();
        boolean hasHttp = body.has("http") && !body.get("http").isNull();
        boolean hasHandler = body.has("handler") && !body.get("handler").isNull();
        Workload workload = null;
        String template = null;
        JsonNode params = body.get("params");
        JsonNode args = body.get("args");
        long timeoutMs = in.integer(body, "", "timeoutMs", 1, limits.maxTimeoutMs(), limits.defaultTimeoutMs(), false);
        // A JSON null is no args, as a null workload, template, http or handler is none: clients
        // generated from the document send every absent member as null.
        if (args != null && !args.isNull() && !hasHandler) {
            in.violation("/args", "only goes with 'handler'");
        }
        if ((hasWorkload ? 1 : 0) + (hasTemplate ? 1 : 0) + (hasHttp ? 1 : 0) + (hasHandler ? 1 : 0) != 1) {
            in.violation("", "needs exactly one of 'workload' (a workload object), 'template' (a template name), 'http' (a call"
                    + " to make) or 'handler' (the name of one of the application's job handlers)");
        } else if (hasHandler) {
            if (params != null) {
                in.violation("/params", "only goes with 'template'");
            }
            String handler = in.string(body, "", "handler", true);
            if (handler != null) {
                Task task = handlers.parse(handler, args == null || args.isNull() ? null : args, "/args", in);
                workload = task == null ? null : Workload.of("/handler", task);
            }
        } else if (hasHttp) {
            if (params != null) {
                in.violation("/params", "only goes with 'template'");
            }
            Task task = http.parse(body.get("http"), "/http", timeoutMs, in);
            workload = task == null ? null : Workload.of("/http", task);
        } else if (hasWorkload) {
            if (params != null) {
                in.violation("/params", "only goes with 'template'");
            }
            workload = workloads.parse(body.get("workload"), "/workload", in);
        } else {
            template = in.name(body, "", "template", true);
            if (template != null && !templates.exists(template)) {
                in.violation("/template", "unknown template '" + template + "' (see GET /api/v1/workloads)");
            } else if (template != null) {
                JsonNode expanded = templates.expand(template, params, "/params", in);
                if (expanded != null) {
                    try {
                        workload = workloads.parse(expanded, "");
                    } catch (InvalidRequestException e) {
                        // A parameter combination that breaks a limit: name the params, say which limit.
                        for (Violation v : e.violations()) {
                            in.violation("/params", "these parameters exceed a limit: " + v.detail());
                        }
                    }
                }
            }
        }
        int priority = (int) in.integer(body, "", "priority", JobSpec.MIN_PRIORITY, JobSpec.MAX_PRIORITY, JobSpec.DEFAULT_PRIORITY, false);
        Instant notBefore = null;
        String nb = in.string(body, "", "notBefore", false);
        if (nb != null) {
            try {
                notBefore = Instant.parse(nb);
                if (notBefore.isAfter(now.plusMillis(limits.maxDelayMs()))) {
                    in.violation("/notBefore", "is more than " + limits.maxDelayMs() + " ms in the future");
                }
            } catch (DateTimeParseException e) {
                in.violation("/notBefore", "must be an RFC 3339 instant such as 2026-01-02T03:04:05Z");
            }
        }
        JobSpec.RetryPolicy retry = JobSpec.RetryPolicy.NONE;
        JsonNode r = body.get("retry");
        if (r != null && !r.isNull() && in.object(r, "/retry")) {
            in.onlyFields(r, "/retry", RETRY_FIELDS);
            int max = (int) in.integer(r, "/retry", "maxAttempts", 1, limits.maxAttempts(), 1, true);
            long backoff = in.integer(r, "/retry", "backoffMs", 0, limits.maxDelayMs(), 1000, false);
            double mult = in.number(r, "/retry", "multiplier", 1.0, 10.0, 2.0);
            retry = new JobSpec.RetryPolicy(max, backoff, mult, limits.maxDelayMs());
        }
        String name = in.string(body, "", "name", false);
        if (name != null && name.length() > 200) {
            in.violation("/name", "must be at most 200 characters");
        }
        List<String> after = after(body, in);
        if (workload != null) {
            workload.results().forEach((of, pointer) -> {
                if (!after.contains(of)) {
                    in.violation(pointer, "names job '" + of + "', which is not in this job's 'after': a result step reads only"
                            + " the jobs the job waited for");
                }
            });
        }
        in.throwIfInvalid();
        return new JobSpec(workload, template, template == null ? null : params, timeoutMs, priority, notBefore, retry, name, after);
    }

    /**
     * The ids of {@code after}, checked for form only (at most {@value JobSpec#MAX_AFTER}, no duplicates, each a job id's
     * shape); that each names an existing job (or a batch entry's key) is the admission's check.
     */
    private static List<String> after(JsonNode body, JsonInput in) {
        JsonNode a = in.array(body, "", "after", 0, JobSpec.MAX_AFTER, false);
        if (a == null) {
            return List.of();
        }
        List<String> ids = new ArrayList<>(a.size());
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < a.size(); i++) {
            JsonNode e = a.get(i);
            String p = "/after/" + i;
            if (!e.isString() || !JobTicket.isToken(e.asString())) {
                in.violation(p, "must be a job id (1 to 64 letters, digits, '-' or '_')");
            } else if (!seen.add(e.asString())) {
                in.violation(p, "names '" + e.asString() + "' twice");
            } else {
                ids.add(e.asString());
            }
        }
        return ids;
    }
}
