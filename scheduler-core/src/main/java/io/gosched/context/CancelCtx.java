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
 * A cancellable context, with an optional deadline (Go's cancelCtx and timerCtx in one).
 *
 * <p>Invariant: once err is set it never changes, done is closed exactly once, after err is
 * set (err() reports err only once done is closed), and children is null; a child registers with its parent only while the parent's err is
 * null (checked under the parent's monitor), so no child misses its parent's cancellation.
 *
 * Go: context/context.go cancelCtx, timerCtx, propagateCancel
 */
final class CancelCtx implements CancelContext {

    private final Context parent;
    private final Chan<Object> done = Chan.make();
    private final Instant deadline;

    /** Guarded by this. */
    private volatile RuntimeException err;
    private Set<CancelCtx> children = new LinkedHashSet<>();
    private RuntimeTimer timer;

    private CancelCtx(Context parent, Instant deadline) {
        this.parent = parent;
        this.deadline = deadline;
    }

    static CancelCtx withDeadline(Context parent, Instant d) {
        Optional<Instant> pd = parent.deadline();
        if (d != null && pd.isPresent() && !pd.get().isAfter(d)) {
            d = null; // the parent's earlier deadline cancels us anyway (Go: plain WithCancel)
        }
        CancelCtx c = new CancelCtx(parent, d != null ? d : pd.orElse(null));
        c.propagateCancel(parent);
        if (d != null) {
            long left = Duration.between(Instant.now(), d).toNanos();
            if (left <= 0) {
                c.cancel(true, Context.DEADLINE_EXCEEDED);
            } else {
                synchronized (c) {
                    if (c.err == null) {
                        c.timer = new RuntimeTimer((arg, when, delay) ->
                                ((CancelCtx) arg).cancel(true, Context.DEADLINE_EXCEEDED), c);
                        c.timer.reset(RuntimeTimer.whenAfter(left), 0);
                    }
                }
            }
        }
        return c;
    }

    /** Arranges for this context to be cancelled with its parent. Go: propagateCancel */
    private void propagateCancel(Context p) {
        if (p instanceof Background) {
            return; // never cancelled
        }
        RuntimeException perr = p.err();
        if (perr != null) {
            cancel(false, perr);
            return;
        }
        if (p instanceof CancelCtx pc) {
            synchronized (pc) {
                if (pc.err == null) {
                    pc.children.add(this);
                    return;
                }
            }
            cancel(false, pc.err);
            return;
        }
        // A context of another kind: watch its done channel (Go starts a goroutine).
        Thread.ofVirtual().name("gosched-context-watch").start(() -> {
            var s = Select.select(Select.recv(p.done()), Select.recv(done));
            if (s.index() == 0) {
                cancel(false, p.err());
            }
        });
    }

    @Override
    public void cancel() {
        cancel(true, Context.CANCELED);
    }

    /** Go: cancelCtx.cancel */
    void cancel(boolean removeFromParent, RuntimeException e) {
        Set<CancelCtx> kids;
        RuntimeTimer t;
        synchronized (this) {
            if (err != null) {
                return;
            }
            err = e;
            kids = children;
            children = null;
            t = timer;
            timer = null;
        }
        done.close();
        for (CancelCtx k : kids) {
            k.cancel(false, e);
        }
        if (t != null) {
            t.stop();
        }
        if (removeFromParent && parent instanceof CancelCtx pc) {
            synchronized (pc) {
                if (pc.children != null) {
                    pc.children.remove(this);
                }
            }
        }
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
