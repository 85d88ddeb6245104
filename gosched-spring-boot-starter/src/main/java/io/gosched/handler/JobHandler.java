package io.gosched.handler;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a bean method a job type: {@code POST /api/v1/jobs {"handler": "<value>", "args": {...}}}
 * runs it as a goroutine, on every attempt of the job.
 *
 * <p>The method takes at most one <em>arguments</em> parameter, of any type the application's
 * Jackson mapper can read (a record, a bean, a {@code Map}, a {@code List}, a scalar), and at most
 * one {@link JobContext}, in either order. The job's {@code args} are bound to the arguments
 * parameter and validated with Bean Validation (as {@code @Valid} would) when the job is
 * submitted: a bad argument is a 422 naming the field ({@code /args/<field>}), never a failed job.
 * The return value is the job's result as JSON ({@code void} or null: a null result); an
 * exception thrown is the attempt's failure, retried under the job's {@code retry} policy.
 *
 * <p>The body runs in the attempt's goroutine, so it may use the whole Go API ({@code Chan},
 * {@code Select}, {@code Go.go}, timers, the job's {@link JobContext#context() context}).
 * Waiting must <em>park</em>: on a channel, a timer, {@code Go.sleep}, the netpoller. Blocking
 * Java code (JDBC, {@code Thread.sleep}, file I/O, a blocking HTTP client) holds the goroutine's
 * M and P; mark such a handler {@link #blocking()} (see docs/handlers.md).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface JobHandler {

    /** The handler's name, what a job body's {@code "handler"} names: 1-64 of {@code A-Za-z0-9._-}, starting with a letter or digit. */
    String value();

    /**
     * Whether the body blocks its thread (JDBC, {@code Thread.sleep}, a blocking client): then it
     * runs as {@code Go.syscall}, its M letting go of its P for the call's duration, so the other
     * goroutines keep running on the P (another M takes it). Default false: the body parks, as
     * goroutine code should.
     */
    boolean blocking() default false;

    /** What the handler does, for people: shown by {@code GET /api/v1/handlers} and the OpenAPI document. */
    String description() default "";
}
