package io.gosched.service.workload;

import java.util.List;

import tools.jackson.databind.JsonNode;

/**
 * One step of a workload: the validated AST the {@link Interpreter} walks. Every step is
 * immutable and already checked against {@link io.gosched.service.ServiceProperties.Limits}; a step
 * that exists is a step that may run.
 *
 * <p>Each record keeps the JSON pointer it was parsed from, so a run-time failure (a closed
 * channel, an unknown channel) can name the step that caused it.
 */
public sealed interface Step {

    /** The JSON pointer of this step in the submitted workload, e.g. {@code /steps/2/steps/0}. */
    String pointer();

    /**
     * The one step of a job of another kind than a workload ({@link Task}): an HTTP target's call
     * ({@code pointer} {@code /http}), an application's handler.
     */
    record Call(String pointer, Task task) implements Step {}

    /** CPU work of {@code us} microseconds that passes a safe point ({@code Go.checkpoint()}) regularly. */
    record Compute(String pointer, long us) implements Step {}

    /** CPU work of {@code us} microseconds with no safe point at all: shows hand-off of a hogged P. Hard-capped. */
    record Hog(String pointer, long us) implements Step {}

    /** {@code time.Sleep(ms)} on the runtime's timers, ended early by the job's context. */
    record Sleep(String pointer, long ms) implements Step {}

    /** {@code runtime.Gosched()}. */
    record Yield(String pointer) implements Step {}

    /** {@code count} goroutines, each running {@code steps}; the spawner tracks them in a WaitGroup. */
    record Spawn(String pointer, int count, List<Step> steps) implements Step {}

    /** Waits for every goroutine this goroutine has spawned so far ({@code wg.Wait()}). */
    record Wait(String pointer) implements Step {}

    /** {@code times} sends of {@code value} on the named channel. */
    record Send(String pointer, String channel, JsonNode value, int times) implements Step {}

    /** {@code times} receives from the named channel. */
    record Recv(String pointer, String channel, int times) implements Step {}

    /** Closes the named channel. */
    record Close(String pointer, String channel) implements Step {}

    /** A select over send and receive cases; with {@code hasDefault} it never blocks. */
    record Select(String pointer, List<Case> cases, boolean hasDefault) implements Step {}

    /** One case of a {@link Select}: a receive ({@code value == null}) or a send of {@code value}. */
    record Case(String pointer, String channel, JsonNode value) {
        public boolean isSend() {
            return value != null;
        }
    }

    /** A blocking call of {@code ms} milliseconds inside {@code Go.syscall}: the P is handed off meanwhile. */
    record Syscall(String pointer, long ms) implements Step {}

    /**
     * Takes the result of job {@code of}, one this job waited for ({@code after}): that job's
     * {@code result.lastReceived} becomes this run's last received value, as if a recv step had
     * taken it, so the job's own result is that value unless a later recv takes another.
     */
    record Result(String pointer, String of) implements Step {}

    /** {@code times} runs of {@code steps}, one after the other, in the same goroutine. */
    record Loop(String pointer, int times, List<Step> steps) implements Step {}
}
