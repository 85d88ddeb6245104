package io.gosched.service.workload;

import java.time.Duration;
import java.util.List;

import io.gosched.service.budget.HeldValue;
import io.gosched.runtime.Chan;
import io.gosched.runtime.ChanClosedException;
import io.gosched.runtime.Go;
import io.gosched.runtime.Select;
import io.gosched.runtime.SelectCase;
import io.gosched.runtime.Selected;
import io.gosched.sync.WaitGroup;
import io.gosched.time.Timer;
import tools.jackson.databind.JsonNode;

/**
 * Runs a {@link Workload} as goroutines: each step becomes the runtime call of the same name.
 *
 * <ul>
 * <li>Every step observes the run's context: a blocking step selects on {@code ctx.Done()}
 *     next to its own case, a CPU step checks {@code ctx.Err()} at each safe point, so DELETE,
 *     the deadline and the run's own first failure all end every goroutine promptly.</li>
 * <li>Concurrency is structured: a goroutine waits for the goroutines it spawned before it
 *     ends (an implicit {@code wg.Wait()}), so when the main goroutine returns, the whole tree
 *     has ended and {@link Run#liveGoroutines()} is zero.</li>
 * <li>The first failing step cancels the run's context (errgroup semantics) and is reported
 *     with its JSON pointer.</li>
 * <li>A send on a named channel whose share of the memory budget (or the budget) is full waits
 *     for room, as a send on a full channel waits for a receiver; the run's context still ends
 *     it. A value that was charged but not sent (cancelled, closed channel, a select's other
 *     case) is withdrawn at once.</li>
 * </ul>
 * Thread-safe: stateless; all state lives in the {@link Run}.
 */
public final class Interpreter {

    /** How often a compute step reaches a safe point: Go's async preemption works at a similar grain. */
    private static final long COMPUTE_SLICE_NANOS = 20_000;

    /** How often a syscall step looks at the context while it blocks its M. */
    private static final long SYSCALL_SLICE_MILLIS = 5;

    /** Unwinds a goroutine whose run was cancelled; carries no stack, is never reported. */
    private static final class Stop extends RuntimeException {
        static final Stop INSTANCE = new Stop();

        private Stop() {
            super("run cancelled", null, false, false);
        }
    }

    /** A goroutine's own bookkeeping: the goroutines it spawned. */
    private static final class Frame {
        final WaitGroup children = new WaitGroup();
    }

    /**
     * Runs the workload's main goroutine body. Must be called inside a goroutine of the run's
     * runtime; returns when every goroutine of the run has ended. Never throws for a step's
     * failure: that is recorded in {@link Run#failure()}.
     */
    public void run(Workload workload, Run run) {
        run.live.incrementAndGet();
        goroutine(workload.steps(), run);
    }

    private void goroutine(List<Step> steps, Run run) {
        Frame frame = new Frame();
        try {
            exec(steps, frame, run);
        } catch (Stop stop) {
            // cancelled: nothing to report, the canceller recorded why
        } catch (StepFailure f) {
            run.fail(new Run.Failure(f.pointer, f.getMessage()));
        } catch (RuntimeException | Error e) {
            run.fail(new Run.Failure("", describe(e)));
        } finally {
            frame.children.await(); // structured: never outlive our children
            run.live.decrementAndGet();
        }
    }

    /** A job of another kind's one call: its result is the run's; its failure fails the run, saying whether to retry. */
    private static void call(Step.Call c, Run run) {
        Task.Outcome o = c.task().run(new Task.Call(run.jobId(), run.attempt(), run.context(), run::report));
        switch (o) {
            case Task.Outcome.Done d -> run.lastReceived.set(d.result());
            case Task.Outcome.Failed f -> {
                if (f.result() != null) {
                    run.lastReceived.set(f.result());
                }
                run.fail(new Run.Failure(c.pointer(), f.error(), f.retryable(), f.notBefore()));
            }
            case Task.Outcome.Cancelled x -> {
                // the context ended: the job's cancel or deadline decides its state
            }
        }
    }

    private void exec(List<Step> steps, Frame frame, Run run) {
        for (Step step : steps) {
            checkContext(run);
            run.stepsRun.incrementAndGet();
            try {
                exec(step, frame, run);
            } catch (Stop | StepFailure passThrough) {
                throw passThrough;
            } catch (RuntimeException e) {
                throw new StepFailure(step.pointer(), describe(e));
            }
        }
    }

    private void exec(Step step, Frame frame, Run run) {
        switch (step) {
            case Step.Compute c -> compute(c.us(), run);
            case Step.Hog h -> hog(h.us(), run);
            case Step.Sleep s -> sleep(s.ms(), run);
            case Step.Yield _ -> Go.yield();
            case Step.Spawn s -> spawn(s, frame, run);
            case Step.Wait _ -> frame.children.await();
            case Step.Send s -> {
                var ch = run.channel(s.channel());
                for (int i = 0; i < s.times(); i++) {
                    Object v = offer(run, s.channel(), s.value());
                    boolean sent = false;
                    try {
                        sent = Select.select("chan send", Select.send(ch, v), Select.recv(run.context().done())).index() == 0;
                    } finally {
                        if (!sent) {
                            withdraw(v);
                        }
                    }
                    if (!sent) {
                        throw Stop.INSTANCE;
                    }
                    run.messagesSent.incrementAndGet();
                }
            }
            case Step.Recv r -> {
                var ch = run.channel(r.channel());
                for (int i = 0; i < r.times(); i++) {
                    Selected sel = Select.select("chan receive", Select.recv(ch), Select.recv(run.context().done()));
                    if (sel.index() != 0) {
                        throw Stop.INSTANCE;
                    }
                    received(sel, run);
                }
            }
            case Step.Close c -> run.channel(c.channel()).close();
            case Step.Result r -> {
                JsonNode v = run.result(r.of());
                if (v == null) {
                    throw new IllegalStateException("the result of job '" + r.of() + "' could not be read when this attempt started"
                            + " (removed by retention since it succeeded?)");
                }
                run.lastReceived.set(v);
            }
            case Step.Select s -> select(s, run);
            case Step.Call c -> call(c, run);
            case Step.Syscall s -> syscall(s.ms(), run);
            case Step.Loop l -> {
                for (int i = 0; i < l.times(); i++) {
                    exec(l.steps(), frame, run);
                }
            }
        }
    }

    /** CPU work that reaches a safe point every {@link #COMPUTE_SLICE_NANOS}: preemptible and cancellable. */
    private static void compute(long us, Run run) {
        long end = System.nanoTime() + us * 1000;
        while (true) {
            long now = System.nanoTime();
            if (now - end >= 0) {
                return;
            }
            spinUntil(end - now < COMPUTE_SLICE_NANOS ? end : now + COMPUTE_SLICE_NANOS);
            Go.checkpoint();
            checkContext(run);
        }
    }

    /**
     * CPU work with no safe point: the runtime cannot stop it before it ends, only hand its P to
     * another M (sysmon's second-quantum rule). The parser caps {@code us} so it always ends.
     */
    private static void hog(long us, Run run) {
        spinUntil(System.nanoTime() + us * 1000);
        checkContext(run);
    }

    private static void spinUntil(long deadline) {
        while (System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
    }

    /** {@code select { case <-ctx.Done(): case <-timer.C: }}, shown as the sleep it is in goroutine dumps. */
    private static void sleep(long ms, Run run) {
        if (ms == 0) {
            return; // time.Sleep(0) returns at once
        }
        Timer t = Timer.newTimer(Duration.ofMillis(ms));
        Selected sel = Select.select("sleep", Select.recv(t.c()), Select.recv(run.context().done()));
        if (sel.index() != 0) {
            t.stop();
            throw Stop.INSTANCE;
        }
    }

    private void spawn(Step.Spawn s, Frame frame, Run run) {
        for (int i = 0; i < s.count(); i++) {
            checkContext(run);
            frame.children.add(1);
            run.live.incrementAndGet();
            run.goroutinesSpawned.incrementAndGet();
            try {
                Go.go(() -> {
                    try {
                        goroutine(s.steps(), run);
                    } finally {
                        frame.children.done();
                    }
                });
            } catch (RuntimeException e) {
                // The runtime refused the goroutine (shutting down): undo our bookkeeping first.
                run.live.decrementAndGet();
                frame.children.done();
                throw e;
            }
        }
    }

    /**
     * {@code select}: a send case on a named channel without budget room is a nil case (it cannot
     * proceed); a blocking select then also waits for the budget to free bytes, and tries again.
     */
    private static void select(Step.Select s, Run run) {
        List<Step.Case> cases = s.cases();
        Chan<Object> freed = null;
        while (true) {
            Object[] offered = new Object[cases.size()];
            SelectCase[] sc = new SelectCase[cases.size() + (s.hasDefault() ? 0 : 2)];
            boolean starved = false;
            for (int i = 0; i < cases.size(); i++) {
                Step.Case c = cases.get(i);
                var ch = run.channel(c.channel());
                if (c.isSend()) {
                    offered[i] = run.offer(c.channel(), c.value());
                    starved |= offered[i] == null;
                    sc[i] = offered[i] == null ? Select.send(null, (Object) c.value()) : Select.send(ch, offered[i]);
                } else {
                    sc[i] = Select.recv(ch);
                }
            }
            if (starved && freed == null && !s.hasDefault()) {
                withdrawAll(offered, -1);
                freed = run.budgetFreed(); // then offer again: a release in between is not missed
                continue;
            }
            Selected sel;
            int chosen = -1;
            try {
                if (s.hasDefault()) {
                    sel = Select.trySelect(sc);
                } else {
                    sc[cases.size()] = Select.recv(run.context().done());
                    sc[cases.size() + 1] = Select.recv(starved ? freed : null);
                    sel = Select.select(sc);
                }
                chosen = sel.index();
            } finally {
                withdrawAll(offered, chosen);
            }
            if (chosen < 0) {
                return; // default case
            }
            if (chosen == cases.size()) {
                throw Stop.INSTANCE;
            }
            if (chosen == cases.size() + 1) {
                freed = null; // the budget freed bytes: offer again
                continue;
            }
            if (cases.get(chosen).isSend()) {
                run.messagesSent.incrementAndGet();
            } else {
                received(sel, run);
            }
            return;
        }
    }

    /**
     * The element to send on {@code channel}: see {@link Run#offer}. Waits while a named
     * channel's share or the memory budget has no room; the run's context ends the wait.
     */
    private static Object offer(Run run, String channel, JsonNode value) {
        Object v = run.offer(channel, value);
        while (v == null) {
            Chan<Object> freed = run.budgetFreed();
            v = run.offer(channel, value); // after registering: a release in between is not missed
            if (v != null) {
                break;
            }
            if (Select.select(Select.recv(freed), Select.recv(run.context().done())).index() != 0) {
                throw Stop.INSTANCE;
            }
            v = run.offer(channel, value);
        }
        return v;
    }

    /** A charged value that was not sent gives its bytes back. */
    private static void withdraw(Object offered) {
        if (offered instanceof HeldValue h) {
            h.withdraw();
        }
    }

    private static void withdrawAll(Object[] offered, int except) {
        for (int i = 0; i < offered.length; i++) {
            if (i != except) {
                withdraw(offered[i]);
            }
        }
    }

    /** A received element: a named channel's value gives its bytes back as the run takes it. */
    private static void received(Selected sel, Run run) {
        if (sel.ok()) {
            run.messagesReceived.incrementAndGet();
            run.lastReceived.set(HeldValue.take(sel.value()));
        }
    }

    /** A blocking call inside entersyscall/exitsyscall; it polls the context so cancellation ends it too. */
    private static void syscall(long ms, Run run) {
        try {
            Go.syscall(() -> {
                long end = System.nanoTime() + ms * 1_000_000;
                long left;
                while ((left = end - System.nanoTime()) > 0 && run.context().err() == null) {
                    Thread.sleep(Math.min(SYSCALL_SLICE_MILLIS, Math.max(1, left / 1_000_000)));
                }
                return null;
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Stop.INSTANCE;
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        checkContext(run);
    }

    private static void checkContext(Run run) {
        if (run.context().err() != null) {
            throw Stop.INSTANCE;
        }
    }

    private static String describe(Throwable e) {
        if (e instanceof ChanClosedException) {
            return e.getMessage() == null ? "channel closed" : e.getMessage();
        }
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    /** A step's failure on its way up to the goroutine's top frame. */
    private static final class StepFailure extends RuntimeException {
        final String pointer;

        StepFailure(String pointer, String detail) {
            super(detail, null, false, false);
            this.pointer = pointer;
        }
    }
}
