package io.gosched.sync;

import io.gosched.context.CancelCauseContext;
import io.gosched.context.Context;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A group of goroutines working on subtasks of one task, Go's {@code golang.org/x/sync/errgroup}:
 * {@link #go(Callable)} runs each subtask in its own goroutine, {@link #await()} waits for all
 * of them and returns the first failure. A group made by {@link #withContext(Context)} also
 * cancels its {@link #context()} on the first failure (with that failure as the context's
 * {@link Context#cause cause}) or, at the latest, when {@code await()} returns.
 *
 * <p>A subtask fails by throwing: the {@code Exception} its {@code call()} throws is Go's non-nil
 * error. An {@link Error} (Go: a panic) is recorded the same way, so {@code await()} never
 * reports success for a group whose subtask died, and is then rethrown in its goroutine so that
 * the runtime's uncaught-exception handler sees it too. A subtask that ends its goroutine by
 * {@link Go#goexit()} has not failed: it counts as finished, cancels nothing, and {@code await()}
 * does not report it, as in Go, where Goexit never reaches the error check. A new group has no limit on the number
 * of active goroutines and does not cancel anything.
 *
 * <p>{@code go} and {@code tryGo} start goroutines, so they are called from a goroutine (as
 * {@link WaitGroup#go}); {@code await} may be called from anywhere.
 *
 * <p>Go: golang.org/x/sync/errgroup
 */
public final class ErrGroup {

    private static final Object TOKEN = new Object();

    /** Null for a group made by the constructor (Go: the zero Group, which cancels nothing). */
    private final CancelCauseContext ctx;
    private final WaitGroup wg = new WaitGroup();
    /** One token per active goroutine while a limit is set, else null. Go: Group.sem */
    private volatile Chan<Object> sem;
    private final Once errOnce = new Once();
    /** The first failure; written once inside errOnce. */
    private volatile Throwable err;

    /** A group with no limit whose failures cancel nothing. Go: new(errgroup.Group) */
    public ErrGroup() {
        this.ctx = null;
    }

    private ErrGroup(CancelCauseContext ctx) {
        this.ctx = ctx;
    }

    /**
     * A group whose {@link #context()} is a child of parent, cancelled the first time a subtask
     * fails or the first time {@link #await()} returns, whichever comes first.
     * Go: errgroup.WithContext
     */
    public static ErrGroup withContext(Context parent) {
        return new ErrGroup(Context.withCancelCause(Objects.requireNonNull(parent, "parent")));
    }

    /**
     * The group's derived context (see {@link #withContext}); {@link Context#background()} for a
     * group made by the constructor, which has none.
     */
    public Context context() {
        return ctx != null ? ctx : Context.background();
    }

    /**
     * Runs task in a new goroutine. Waits first, while a limit is set, until the group has fewer
     * active goroutines than the limit. The first task to throw cancels the group's context (if
     * it has one); {@link #await()} returns what it threw.
     *
     * @throws IllegalStateException outside a goroutine
     *     Go: errgroup.Group.Go
     */
    public void go(Callable<?> task) {
        Objects.requireNonNull(task, "task");
        requireGoroutine("ErrGroup.go");
        Chan<Object> s = sem;
        if (s != null) {
            s.send(TOKEN);
        }
        start(task, s);
    }

    /**
     * Runs task in a new goroutine only if the group is below its limit now; returns whether it
     * started.
     *
     * @throws IllegalStateException outside a goroutine
     *     Go: errgroup.Group.TryGo
     */
    public boolean tryGo(Callable<?> task) {
        Objects.requireNonNull(task, "task");
        requireGoroutine("ErrGroup.tryGo");
        Chan<Object> s = sem;
        if (s != null && !s.trySend(TOKEN)) {
            return false;
        }
        start(task, s);
        return true;
    }

    private void start(Callable<?> task, Chan<Object> s) {
        wg.add(1);
        Go.go(() -> {
            try {
                task.call();
            } catch (Go.Goexit exit) {
                // runtime.Goexit ends the task's goroutine before its error check: no failure,
                // nothing cancelled (x/sync/errgroup: f never returns, g.done() still runs).
                throw exit;
            } catch (Throwable t) {
                fail(t);
                if (t instanceof Error e) {
                    throw e; // Go: a panic in a goroutine; the runtime's handler reports it
                }
            } finally {
                if (s != null) {
                    s.recv();
                }
                wg.done();
            }
        });
    }

    private void fail(Throwable t) {
        errOnce.run(() -> {
            err = t;
            if (ctx != null) {
                ctx.cancel(t);
            }
        });
    }

    /**
     * Waits until every task started by {@link #go} has returned, then cancels the group's
     * context (if it has one) and returns the first failure, or null if none failed.
     * Go: errgroup.Group.Wait
     */
    public Throwable await() {
        wg.await();
        Throwable e = err;
        if (ctx != null) {
            ctx.cancel(e);
        }
        return e;
    }

    /**
     * Limits the number of active goroutines in the group to n; a negative n removes the limit,
     * and 0 lets no new goroutine start ({@code go} blocks, {@code tryGo} returns false).
     *
     * @throws IllegalStateException while goroutines of the group are still active under a limit
     *     ("errgroup: modify limit while N goroutines in the group are still active")
     *     Go: errgroup.Group.SetLimit
     */
    public void setLimit(int n) {
        if (n < 0) {
            sem = null;
            return;
        }
        Chan<Object> s = sem;
        if (s != null && s.len() != 0) {
            throw new IllegalStateException(
                    "errgroup: modify limit while " + s.len() + " goroutines in the group are still active");
        }
        sem = Chan.make(n);
    }

    private static void requireGoroutine(String what) {
        if (!Go.inGoroutine()) {
            throw new IllegalStateException(what + " called outside a goroutine: start the group's work from one "
                    + "(GoRuntime.run or GoRuntime.go)");
        }
    }
}
