package io.gosched.context;

import io.gosched.runtime.Chan;
import io.gosched.runtime.RuntimeTimer;
import io.gosched.runtime.Select;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * A cancellable context, with an optional deadline (Go's cancelCtx and timerCtx in one), an
 * optional cause, and an optional hook run on cancellation (what AfterFunc registers).
 *
 * <p>Invariant: once err is set it never changes, done is closed exactly once, after err is
 * set (err() reports err only once done is closed), and children is null; a child registers with its parent only while the parent's err is
 * null (checked under the parent's monitor), so no child misses its parent's cancellation.
 * cause is set in the same critical section as err, never after it, and never changes either.
 *
 * Go: context/context.go cancelCtx, timerCtx, propagateCancel
 */
final class CancelCtx implements CancelCauseContext {

    /** The key under which {@link ValueCtx#lookup} finds the nearest CancelCtx. Go: cancelCtxKey */
    static final Object KEY = new Object();

    private final Context parent;
    private final Chan<Object> done = Chan.make();
    private final Instant deadline;
    /** Run once by the cancel that sets err, after done is closed; null unless made by {@link #afterFunc}. */
    private final Runnable onCancel;

    /** Guarded by this. */
    private volatile RuntimeException err;
    private Throwable cause;
    private Set<CancelCtx> children = new LinkedHashSet<>();
    private RuntimeTimer timer;

    private CancelCtx(Context parent, Instant deadline, Runnable onCancel) {
        this.parent = parent;
        this.deadline = deadline;
        this.onCancel = onCancel;
    }

    static CancelCtx withDeadline(Context parent, Instant d) {
        return withDeadline(parent, d, null);
    }

    /** A child of parent cancelled with it, or at d (if not null) with DEADLINE_EXCEEDED and cause. Go: WithDeadlineCause */
    static CancelCtx withDeadline(Context parent, Instant d, Throwable cause) {
        Optional<Instant> pd = parent.deadline();
        if (d != null && pd.isPresent() && !pd.get().isAfter(d)) {
            d = null; // the parent's earlier deadline cancels us anyway (Go: plain WithCancel)
        }
        CancelCtx c = new CancelCtx(parent, d != null ? d : pd.orElse(null), null);
        c.propagateCancel(parent);
        if (d != null) {
            long left = Duration.between(io.gosched.time.Time.now(), d).toNanos();
            if (left <= 0) {
                c.cancel(true, Context.DEADLINE_EXCEEDED, cause);
            } else {
                synchronized (c) {
                    if (c.err == null) {
                        c.timer = new RuntimeTimer((arg, when, delay) ->
                                ((CancelCtx) arg).cancel(true, Context.DEADLINE_EXCEEDED, cause), c);
                        c.timer.reset(RuntimeTimer.whenAfter(left), 0);
                    }
                }
            }
        }
        return c;
    }

    /**
     * A child of parent that runs onCancel once when it is cancelled, by parent or by its own
     * cancel; AfterFunc's context. Go: afterFuncCtx
     */
    static CancelCtx afterFunc(Context parent, Runnable onCancel) {
        CancelCtx c = new CancelCtx(parent, null, onCancel);
        c.propagateCancel(parent);
        return c;
    }

    /** Arranges for this context to be cancelled with its parent. Go: propagateCancel */
    private void propagateCancel(Context p) {
        if (p.done() == Background.INSTANCE.done()) {
            return; // never cancelled: Background, WithoutCancel, and values on top of them
        }
        RuntimeException perr = p.err();
        if (perr != null) {
            cancel(false, perr, Context.cause(p));
            return;
        }
        CancelCtx pc = parentCancelCtx(p);
        if (pc != null) {
            RuntimeException err;
            Throwable why;
            synchronized (pc) {
                if (pc.err == null) {
                    pc.children.add(this);
                    return;
                }
                // The parent is being cancelled or is done: its err and cause are set together in
                // its critical section, but done may not be closed yet, so pc.cause() (which
                // answers only once done is closed) would still say null here. Read the field
                // under the lock, as Go reads p.cause under p.mu.
                err = pc.err;
                why = pc.cause;
            }
            cancel(false, err, why);
            return;
        }
        // A context of another kind: watch its done channel (Go starts a goroutine).
        Thread.ofVirtual().name("gosched-context-watch").start(() -> {
            var s = Select.select(Select.recv(p.done()), Select.recv(done));
            if (s.index() == 0) {
                cancel(false, p.err(), Context.cause(p));
            }
        });
    }

    /**
     * The CancelCtx under p (p itself, or the nearest one that p's values come from) if p's done
     * channel is that context's own, else null: a context that overrides done() must be watched.
     * Go: parentCancelCtx
     */
    private static CancelCtx parentCancelCtx(Context p) {
        return ValueCtx.lookup(p, KEY) instanceof CancelCtx pc && pc.done == p.done() ? pc : null;
    }

    @Override
    public void cancel() {
        cancel(true, Context.CANCELED, null);
    }

    @Override
    public void cancel(Throwable cause) {
        cancel(true, Context.CANCELED, cause);
    }

    /** Go: cancelCtx.cancel without a cause (the cause is then e). */
    void cancel(boolean removeFromParent, RuntimeException e) {
        cancel(removeFromParent, e, null);
    }

    /** Go: cancelCtx.cancel; a null cause means e. */
    void cancel(boolean removeFromParent, RuntimeException e, Throwable cause) {
        Throwable why = cause != null ? cause : e;
        Set<CancelCtx> kids;
        RuntimeTimer t;
        synchronized (this) {
            if (err != null) {
                return;
            }
            this.cause = why; // before err: cause() is read only once err is set
            err = e;
            kids = children;
            children = null;
            t = timer;
            timer = null;
        }
        done.close();
        for (CancelCtx k : kids) {
            k.cancel(false, e, why);
        }
        if (t != null) {
            t.stop();
        }
        if (removeFromParent) {
            CancelCtx pc = parentCancelCtx(parent);
            if (pc != null) {
                synchronized (pc) {
                    if (pc.children != null) {
                        pc.children.remove(this);
                    }
                }
            }
        }
        if (onCancel != null) {
            onCancel.run();
        }
    }

    /** Why this context was cancelled; null while it is not. Go: Cause, for a cancelCtx */
    Throwable cause() {
        if (err() == null) {
            return null;
        }
        synchronized (this) {
            return cause;
        }
    }

    Context parent() {
        return parent;
    }

    @Override
    public Object value(Object key) {
        return ValueCtx.lookup(this, key);
    }

    @Override
    public Chan<?> done() {
        return done;
    }

    /**
     * Go's contract: null until done() is closed, then why. cancel sets err before it closes
     * done, so err is read only once done is seen closed (both are published with release
     * stores and read with acquire loads): a caller never sees err while done() would still
     * block. Go reads both under c.mu; this read takes no lock.
     */
    @Override
    public RuntimeException err() {
        return done.isClosed() ? err : null;
    }

    @Override
    public Optional<Instant> deadline() {
        return Optional.ofNullable(deadline);
    }

    /** Number of registered children; for tests. */
    synchronized int childCount() {
        return children == null ? 0 : children.size();
    }

    @Override
    public String toString() {
        return parent + (deadline != null ? ".WithDeadline(" + deadline + ")" : ".WithCancel");
    }
}
