package io.gosched.service.job;

import io.gosched.service.job.spi.JobRecord;

/**
 * The type of a job, as the {@code type} tag of the by-type job meters
 * ({@code gosched_jobs_by_type_*}, docs/telemetry.md) names it:
 * <ul>
 *   <li>{@value #DSL}: a literal workload of the DSL (and any job whose kind this version does not know);
 *   <li>{@code template:NAME}: a workload submitted by template ({@code NAME} is one of the fixed
 *       templates of {@code GET /api/v1/workloads});
 *   <li>{@value #HTTP}: an HTTP-target job;
 *   <li>{@code handler:NAME}: a job of the application's handler {@code NAME} (a bean of the
 *       application, checked at submission).
 * </ul>
 * Each value comes from a fixed set or from the application's own beans, never from free text a
 * client chose, so the tag's cardinality is bounded. One function, {@link #of(String, String)},
 * decides; the overloads only read its two inputs from a spec, so that a job counts under the same
 * type at its submission (a {@link JobSpec}) and on whichever node ends it (its {@link JobRecord}).
 */
public final class JobType {

    /** A literal workload of the DSL. */
    public static final String DSL = "dsl";
    /** An HTTP-target job. */
    public static final String HTTP = JobRecord.Spec.HTTP;
    /** A template's type is this and the template's name. */
    public static final String TEMPLATE_PREFIX = "template:";

    private JobType() {
    }

    /**
     * The type of a job of {@code kind} ({@link JobRecord.Spec#kind()}: {@code http},
     * {@code handler:NAME}, or null for a workload) submitted by {@code template} (or null). A kind
     * names what runs, so it wins over a template; a kind this version does not know, or a handler
     * kind without a name, is {@value #DSL}.
     */
    public static String of(String kind, String template) {
        if (HTTP.equals(kind)) {
            return HTTP;
        }
        String handler = JobRecord.Spec.handlerOf(kind);
        if (handler != null && !handler.isEmpty()) {
            return JobRecord.Spec.HANDLER_PREFIX + handler;
        }
        if (kind == null && template != null && !template.isEmpty()) {
            return TEMPLATE_PREFIX + template;
        }
        return DSL;
    }

    /** The type of a job as its record keeps it; {@value #DSL} for none. */
    public static String of(JobRecord.Spec spec) {
        return spec == null ? DSL : of(spec.kind(), spec.template());
    }

    /** The type of a job as submitted. */
    public static String of(JobSpec spec) {
        return spec == null ? DSL : of(spec.kind(), spec.template());
    }
}
