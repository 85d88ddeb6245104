package io.gosched.context;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoTesting;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ports of Go's context/x_test.go for values, causes and WithoutCancel: TestValues,
 * TestWithValueChecksKey, TestInvalidDerivedFail, TestParentFinishesChild, TestLayersCancel,
 * TestLayersTimeout, TestWithCancelCanceledParent, TestWithCancelSimultaneouslyCanceledParent,
 * TestCause, TestCauseRace, TestWithoutCancel, TestCustomContextPropagation,
 * TestCustomContextCause.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a deadlock fails the test instead of hanging the run
class ContextValueCauseTest {

    /** Go: otherContext, a Context that is not one of this package's types; it forwards everything. */
    record OtherContext(Context c) implements Context {
        public Chan<?> done() { return c.done(); }
        public RuntimeException err() { return c.err(); }
        public Optional<Instant> deadline() { return c.deadline(); }
        public Object value(Object key) { return c.value(key); }
    }

    /** Go: key1, a key type without a String method. */
    static final class Key1 {
        final int v;
        Key1(int v) { this.v = v; }
        @Override public boolean equals(Object o) { return o instanceof Key1 k && k.v == v; }
        @Override public int hashCode() { return v; }
    }

    /** Go: key2, a key type with a String method. */
    record Key2(int v) {
        @Override public String toString() { return "context_test.key2(" + v + ")"; }
    }

    static final Key1 K1 = new Key1(1);
    static final Key2 K2 = new Key2(1); // same int as K1, different type
    static final Key2 K3 = new Key2(3); // same type as K2, different int
    static final String KEY1_NAME = Key1.class.getTypeName();

    static void check(Context c, String nm, String v1, String v2, String v3) {
        assertThat(c.value(K1)).as("%s.value(k1)", nm).isEqualTo(v1);
        assertThat(c.value(K2)).as("%s.value(k2)", nm).isEqualTo(v2);
        assertThat(c.value(K3)).as("%s.value(k3)", nm).isEqualTo(v3);
    }

    /** Go: TestValues. */
    @Test
    void testValues() {
        Context c0 = Context.background();
        check(c0, "c0", null, null, null);

        Context c1 = Context.withValue(Context.background(), K1, "c1k1");
        check(c1, "c1", "c1k1", null, null);
        assertThat(c1).hasToString("context.Background.WithValue(" + KEY1_NAME + ", c1k1)");

        Context c2 = Context.withValue(c1, K2, "c2k2");
        check(c2, "c2", "c1k1", "c2k2", null);
        assertThat(c2).hasToString("context.Background.WithValue(" + KEY1_NAME + ", c1k1).WithValue(context_test.key2(1), c2k2)");

        Context c3 = Context.withValue(c2, K3, "c3k3");
        check(c3, "c3", "c1k1", "c2k2", "c3k3");

        Context c4 = Context.withValue(c3, K1, null);
        check(c4, "c4", null, "c2k2", "c3k3");
        assertThat(c4).hasToString("context.Background.WithValue(" + KEY1_NAME + ", c1k1)"
                + ".WithValue(context_test.key2(1), c2k2).WithValue(context_test.key2(3), c3k3).WithValue(" + KEY1_NAME + ", <nil>)");

        Context o0 = new OtherContext(Context.background());
        check(o0, "o0", null, null, null);

        Context o1 = new OtherContext(Context.withValue(Context.background(), K1, "c1k1"));
        check(o1, "o1", "c1k1", null, null);

        Context o2 = Context.withValue(o1, K2, "o2k2");
        check(o2, "o2", "c1k1", "o2k2", null);

        Context o3 = new OtherContext(c4);
        check(o3, "o3", null, "c2k2", "c3k3");

        Context o4 = Context.withValue(o3, K3, null);
        check(o4, "o4", null, "c2k2", null);
    }

    /** Values pass through cancellable contexts, and a deep chain is walked without recursion. */
    @Test
    void valuesPassThroughCancelContextsAndDeepChains() {
        CancelContext c = Context.withCancel(Context.withValue(Context.background(), K1, "v"));
        assertThat(Context.withTimeout(c, Duration.ofHours(1)).value(K1)).isEqualTo("v");
        Context deep = c;
        for (int i = 0; i < 100_000; i++) {
            deep = Context.withValue(deep, new Key2(i + 10), i);
        }
        assertThat(deep.value(K1)).isEqualTo("v");
        assertThat(deep.value(new Key2(10))).isEqualTo(0);
        assertThat(deep.value(new Object())).isNull();
        c.cancel();
    }

    /** Go: TestWithValueChecksKey (a null key panics "nil key"; Java has no uncomparable keys). */
    @Test
    void testWithValueChecksKey() {
        assertThatThrownBy(() -> Context.withValue(Context.background(), null, "bar"))
                .isInstanceOf(NullPointerException.class).hasMessage("nil key");
    }

    /** Go: TestInvalidDerivedFail. */
    @Test
    void testInvalidDerivedFail() {
        assertThatThrownBy(() -> Context.withCancel(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Context.withDeadline(null, Instant.now())).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Context.withValue(null, "foo", "bar")).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Context.withCancelCause(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Context.withoutCancel(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Context.afterFunc(null, () -> { })).isInstanceOf(NullPointerException.class);
    }

    /**
     * Go: TestParentFinishesChild. A timer child under a value child under the parent is linked to
     * the parent directly (no watcher), and cancelling the parent finishes all of them.
     */
    @Test
    void testParentFinishesChild() {
        CancelContext parent = Context.withCancel(Context.background());
        CancelContext cancelChild = Context.withCancel(parent);
        Context valueChild = Context.withValue(parent, "key", "value");
        CancelContext timerChild = Context.withTimeout(valueChild, Duration.ofHours(10000));
        for (Context c : List.of(parent, cancelChild, valueChild, timerChild)) {
            assertThat(c.done().isClosed()).as("%s done before cancel", c).isFalse();
        }
        assertThat(((CancelCtx) parent).childCount()).as("the parent's children: the two cancellable ones").isEqualTo(2);
        parent.cancel();
        assertThat(((CancelCtx) parent).childCount()).as("cancel didn't clear the children").isZero();
        for (Context c : List.of(parent, cancelChild, valueChild, timerChild)) {
            assertThat(c.done().isClosed()).as("%s.done() blocked, but shouldn't have", c).isTrue();
            assertThat(c.err()).as("%s.err()", c).isSameAs(Context.CANCELED);
        }
        // A value context of a cancelled parent is born cancelled.
        Context precanceledChild = Context.withValue(parent, "key", "value");
        assertThat(precanceledChild.done().isClosed()).isTrue();
        assertThat(precanceledChild.err()).isSameAs(Context.CANCELED);
        assertThat(timerChild.value("key")).isEqualTo("value");
    }

    /** Go: TestLayersCancel. */
    @Test
    void testLayersCancel() throws Exception {
        testLayers(System.nanoTime(), false);
    }

    /** Go: TestLayersTimeout. */
    @Test
    void testLayersTimeout() throws Exception {
        testLayers(System.nanoTime(), true);
    }

    private static void testLayers(long seed, boolean testTimeout) throws Exception {
        Random r = new Random(seed);
        String prefix = "seed=" + seed + ": ";
        List<Object> vals = new ArrayList<>();
        List<CancelContext> cancels = new ArrayList<>();
        int numTimers = 0;
        Context ctx = Context.background();
        for (int i = 0; i < 30 || numTimers == 0 || cancels.isEmpty() || vals.isEmpty(); i++) {
            switch (r.nextInt(3)) {
                case 0 -> {
                    Object v = new Object();
                    ctx = Context.withValue(ctx, v, v);
                    vals.add(v);
                }
                case 1 -> {
                    CancelContext c = Context.withCancel(ctx);
                    ctx = c;
                    cancels.add(c);
                }
                default -> {
                    CancelContext c = Context.withTimeout(ctx, testTimeout ? Duration.ofMillis(20) : Duration.ofHours(24));
                    ctx = c;
                    cancels.add(c);
                    numTimers++;
                }
            }
        }
        Context top = ctx;
        Runnable checkValues = () -> {
            for (Object key : vals) {
                assertThat(top.value(key)).as(prefix + "value").isSameAs(key);
            }
        };
        if (!testTimeout) {
            assertThat(top.done().isClosed()).as(prefix + "ctx should not be canceled yet").isFalse();
        }
        assertThat(top.toString()).startsWith("context.Background.");
        checkValues.run();
        if (testTimeout) {
            GoTesting.await(prefix + "ctx should have timed out", () -> top.done().isClosed());
            checkValues.run();
        } else {
            cancels.get(r.nextInt(cancels.size())).cancel();
            assertThat(top.done().isClosed()).as(prefix + "ctx should be canceled").isTrue();
            checkValues.run();
        }
        for (CancelContext c : cancels) {
            c.cancel();
        }
    }

    /** Go: TestWithCancelCanceledParent. */
    @Test
    void testWithCancelCanceledParent() {
        CancelCauseContext parent = Context.withCancelCause(Context.background());
        Exception cause = new Exception("Because!");
        parent.cancel(cause);
        CancelContext c = Context.withCancel(parent);
        assertThat(c.done().isClosed()).as("child not done immediately upon construction").isTrue();
        assertThat(c.err()).isSameAs(Context.CANCELED);
        assertThat(Context.cause(c)).as("child's cause").isSameAs(cause);
    }

    /** Go: TestWithCancelSimultaneouslyCanceledParent. */
    @Test
    void testWithCancelSimultaneouslyCanceledParent() throws Exception {
        GoTesting.runGo(2, () -> {
            for (int i = 0; i < 100; i++) {
                CancelCauseContext parent = Context.withCancelCause(Context.background());
                Exception cause = new Exception("Because!");
                Go.go(() -> parent.cancel(cause));
                CancelContext c = Context.withCancel(parent);
                c.done().recv();
                assertThat(c.err()).isSameAs(Context.CANCELED);
                assertThat(Context.cause(c)).as("child has wrong cause").isSameAs(cause);
            }
        });
    }

    /** Go: TestCause, the whole table. */
    @Test
    void testCause() {
        Duration forever = Duration.ofSeconds(1_000_000);
        Exception parentCause = new Exception("parentCause");
        Exception childCause = new Exception("childCause");
        Exception tooSlow = new Exception("tooSlow");
        Exception finishedEarly = new Exception("finishedEarly");
        record Case(String name, Supplier<Context> ctx, RuntimeException err, Throwable cause) {}
        List<Case> cases = List.of(
                new Case("Background", Context::background, null, null),
                new Case("WithCancel", () -> {
                    CancelContext c = Context.withCancel(Context.background());
                    c.cancel();
                    return c;
                }, Context.CANCELED, Context.CANCELED),
                new Case("WithCancelCause", () -> {
                    CancelCauseContext c = Context.withCancelCause(Context.background());
                    c.cancel(parentCause);
                    return c;
                }, Context.CANCELED, parentCause),
                new Case("WithCancelCause nil", () -> {
                    CancelCauseContext c = Context.withCancelCause(Context.background());
                    c.cancel(null);
                    return c;
                }, Context.CANCELED, Context.CANCELED),
                new Case("WithCancelCause: parent cause before child", () -> {
                    CancelCauseContext p = Context.withCancelCause(Context.background());
                    CancelCauseContext c = Context.withCancelCause(p);
                    p.cancel(parentCause);
                    c.cancel(childCause);
                    return c;
                }, Context.CANCELED, parentCause),
                new Case("WithCancelCause: parent cause after child", () -> {
                    CancelCauseContext p = Context.withCancelCause(Context.background());
                    CancelCauseContext c = Context.withCancelCause(p);
                    c.cancel(childCause);
                    p.cancel(parentCause);
                    return c;
                }, Context.CANCELED, childCause),
                new Case("WithCancelCause: parent cause before nil", () -> {
                    CancelCauseContext p = Context.withCancelCause(Context.background());
                    CancelContext c = Context.withCancel(p);
                    p.cancel(parentCause);
                    c.cancel();
                    return c;
                }, Context.CANCELED, parentCause),
                new Case("WithCancelCause: parent cause after nil", () -> {
                    CancelCauseContext p = Context.withCancelCause(Context.background());
                    CancelContext c = Context.withCancel(p);
                    c.cancel();
                    p.cancel(parentCause);
                    return c;
                }, Context.CANCELED, Context.CANCELED),
                new Case("WithCancelCause: child cause after nil", () -> {
                    CancelContext p = Context.withCancel(Context.background());
                    CancelCauseContext c = Context.withCancelCause(p);
                    p.cancel();
                    c.cancel(childCause);
                    return c;
                }, Context.CANCELED, Context.CANCELED),
                new Case("WithCancelCause: child cause before nil", () -> {
                    CancelContext p = Context.withCancel(Context.background());
                    CancelCauseContext c = Context.withCancelCause(p);
                    c.cancel(childCause);
                    p.cancel();
                    return c;
                }, Context.CANCELED, childCause),
                new Case("WithTimeout", () -> {
                    CancelContext c = Context.withTimeout(Context.background(), Duration.ZERO);
                    c.cancel();
                    return c;
                }, Context.DEADLINE_EXCEEDED, Context.DEADLINE_EXCEEDED),
                new Case("WithTimeout canceled", () -> {
                    CancelContext c = Context.withTimeout(Context.background(), forever);
                    c.cancel();
                    return c;
                }, Context.CANCELED, Context.CANCELED),
                new Case("WithTimeoutCause", () -> {
                    CancelContext c = Context.withTimeoutCause(Context.background(), Duration.ZERO, tooSlow);
                    c.cancel();
                    return c;
                }, Context.DEADLINE_EXCEEDED, tooSlow),
                new Case("WithTimeoutCause canceled", () -> {
                    CancelContext c = Context.withTimeoutCause(Context.background(), forever, tooSlow);
                    c.cancel();
                    return c;
                }, Context.CANCELED, Context.CANCELED),
                new Case("WithTimeoutCause stacked", () -> {
                    CancelCauseContext p = Context.withCancelCause(Context.background());
                    Context c = Context.withTimeoutCause(p, Duration.ZERO, tooSlow);
                    p.cancel(finishedEarly);
                    return c;
                }, Context.DEADLINE_EXCEEDED, tooSlow),
                new Case("WithTimeoutCause stacked canceled", () -> {
                    CancelCauseContext p = Context.withCancelCause(Context.background());
                    Context c = Context.withTimeoutCause(p, forever, tooSlow);
                    p.cancel(finishedEarly);
                    return c;
                }, Context.CANCELED, finishedEarly),
                new Case("WithDeadlineCause in the past", () ->
                        Context.withDeadlineCause(Context.background(), Instant.now().minusSeconds(1), tooSlow),
                        Context.DEADLINE_EXCEEDED, tooSlow),
                new Case("WithoutCancel", () -> Context.withoutCancel(Context.background()), null, null),
                new Case("WithoutCancel canceled", () -> {
                    CancelCauseContext p = Context.withCancelCause(Context.background());
                    Context c = Context.withoutCancel(p);
                    p.cancel(finishedEarly);
                    return c;
                }, null, null),
                new Case("WithoutCancel timeout", () -> {
                    CancelContext p = Context.withTimeoutCause(Context.background(), Duration.ZERO, tooSlow);
                    Context c = Context.withoutCancel(p);
                    p.cancel();
                    return c;
                }, null, null),
                new Case("WithValue over WithCancelCause", () -> {
                    CancelCauseContext p = Context.withCancelCause(Context.background());
                    Context c = Context.withValue(p, "k", "v");
                    p.cancel(parentCause);
                    return c;
                }, Context.CANCELED, parentCause));
        for (Case tc : cases) {
            Context ctx = tc.ctx().get();
            assertThat(ctx.err()).as("%s: ctx.err()", tc.name()).isSameAs(tc.err());
            assertThat(Context.cause(ctx)).as("%s: Context.cause(ctx)", tc.name()).isSameAs(tc.cause());
        }
    }

    /** A deadline cause fires from the timer too, not only for a deadline already past. */
    @Test
    void aDeadlineCauseIsReportedWhenTheTimerFires() throws Exception {
        Exception tooSlow = new Exception("tooSlow");
        GoTesting.runGo(2, () -> {
            CancelContext c = Context.withTimeoutCause(Context.background(), Duration.ofMillis(10), tooSlow);
            CancelContext child = Context.withCancel(c);
            child.done().recv();
            assertThat(c.err()).isSameAs(Context.DEADLINE_EXCEEDED);
            assertThat(Context.cause(c)).isSameAs(tooSlow);
            assertThat(Context.cause(child)).as("a child inherits the cause").isSameAs(tooSlow);
        });
    }

    /** Go: TestCauseRace. Polling cause() (not done()) sees either nothing or the cause, never another value. */
    @Test
    void testCauseRace() throws Exception {
        GoTesting.runGo(2, () -> {
            for (int round = 0; round < 100; round++) {
                Exception cause = new Exception("TestCauseRace");
                CancelCauseContext ctx = Context.withCancelCause(Context.background());
                Go.go(() -> ctx.cancel(cause));
                for (;;) {
                    Throwable err = Context.cause(ctx);
                    if (err != null) {
                        assertThat(err).isSameAs(cause);
                        assertThat(ctx.err()).as("cause visible before err").isSameAs(Context.CANCELED);
                        break;
                    }
                    Go.yield();
                }
            }
        });
    }

    /**
     * Go's propagateCancel reads the parent's cause under the parent's lock, so a child made while
     * its parent is being cancelled with a cause gets that cause, as one made before or after
     * does. The window is between the parent's cause being set and its done channel being
     * closed: a goroutine on the other P makes children until the parent is done, every child
     * must report the parent's cause. The window is a few instructions wide; before the fix 5
     * of 6 runs of 50,000 rounds failed (at rounds 242 to 20,790), hence 100,000.
     */
    @Test
    void contextChildInheritsCauseWhileParentIsBeingCancelled() throws Exception {
        GoTesting.runGo(2, () -> {
            int madeBeforeDone = 0;
            for (int round = 0; round < 100_000 * GoTesting.STRESS; round++) {
                Exception cause = new Exception("parent's cause, round " + round);
                CancelCauseContext parent = Context.withCancelCause(Context.background());
                List<Context> children = new ArrayList<>();
                Chan<Boolean> started = Chan.make(1);
                Go.go(() -> {
                    started.send(true);
                    parent.cancel(cause);
                });
                started.recv();
                while (parent.err() == null) {
                    children.add(Context.withCancel(parent));
                    children.add(Context.withCancelCause(parent));
                    children.add(Context.withTimeout(parent, Duration.ofHours(1)));
                }
                children.add(Context.withCancel(parent));
                for (Context c : children) {
                    c.done().recv(); // a child registered before the cancel is cancelled after the parent's done closes, as in Go
                    assertThat(c.err()).as("round %d: %s", round, c).isSameAs(Context.CANCELED);
                    assertThat(Context.cause(c)).as("round %d: cause of a child of %d", round, children.size()).isSameAs(cause);
                }
                madeBeforeDone += children.size() > 1 ? 1 : 0;
            }
            assertThat(madeBeforeDone).as("rounds with a child made before the parent was done").isPositive();
        });
    }

    /** Go: TestWithoutCancel. */
    @Test
    void testWithoutCancel() {
        String key = "key";
        String value = "value";
        CancelContext parent = Context.withTimeout(Context.withValue(Context.background(), key, value), Duration.ofHours(1));
        Context ctx = Context.withoutCancel(parent);
        parent.cancel();
        assertThat(ctx.deadline()).as("ctx.deadline()").isEmpty();
        assertThat(ctx.done().isClosed()).as("ctx.done() never closes").isFalse();
        assertThat(ctx.err()).as("ctx.err()").isNull();
        assertThat(ctx.value(key)).as("ctx.value(%s)", key).isEqualTo(value);
        assertThat(ctx.toString()).endsWith(".WithoutCancel");
        // Children of a WithoutCancel context live on their own and link to no parent.
        CancelContext child = Context.withCancel(ctx);
        assertThat(child.err()).isNull();
        assertThat(child.value(key)).isEqualTo(value);
        child.cancel();
        assertThat(child.err()).isSameAs(Context.CANCELED);
    }

    /** Go: customDoneContext, a context that overrides done() of the cancellable context it wraps. */
    record CustomDoneContext(Context c, Chan<Object> donec) implements Context {
        public Chan<?> done() { return donec; }
        public RuntimeException err() { return c.err(); }
        public Optional<Instant> deadline() { return c.deadline(); }
        public Object value(Object key) { return c.value(key); }
    }

    /**
     * Go: TestCustomContextPropagation. A child of a context with its own done() is watched
     * through that channel (not linked to the wrapped context) and still inherits the cause.
     */
    @Test
    void testCustomContextPropagation() {
        Exception cause = new Exception("TestCustomContextPropagation");
        Chan<Object> donec = Chan.make();
        CancelCauseContext ctx1 = Context.withCancelCause(Context.background());
        Context ctx2 = new CustomDoneContext(ctx1, donec);
        CancelContext ctx3 = Context.withCancel(ctx2);
        assertThat(((CancelCtx) ctx1).childCount()).as("not linked: ctx2 overrides done()").isZero();
        ctx1.cancel(cause);
        donec.close();
        ctx3.done().recv();
        assertThat(ctx3.err()).isSameAs(Context.CANCELED);
        assertThat(Context.cause(ctx3)).as("child has wrong cause").isSameAs(cause);
        ctx3.cancel();
    }

    /** Go: customCauseContext, a context of another implementation that can be cancelled. */
    static final class CustomCauseContext implements Context {
        private final Chan<Object> done = Chan.make();
        private volatile RuntimeException err;
        private CancelContext cancelChild;

        public synchronized Chan<?> done() { return done; }
        public RuntimeException err() { return err; }
        public Optional<Instant> deadline() { return Optional.empty(); }
        public Object value(Object key) { return null; }

        void cancel() {
            CancelContext child;
            synchronized (this) {
                err = Context.CANCELED;
                done.close();
                child = cancelChild;
            }
            if (child != null) {
                child.cancel();
            }
        }

        synchronized void setCancelChild(CancelContext c) {
            cancelChild = Objects.requireNonNull(c);
        }
    }

    /** Go: TestCustomContextCause. */
    @Test
    void testCustomContextCause() throws Exception {
        // A cancelled custom context: err and cause are CANCELED.
        CustomCauseContext ccc = new CustomCauseContext();
        ccc.cancel();
        assertThat(ccc.err()).isSameAs(Context.CANCELED);
        assertThat(Context.cause(ccc)).isSameAs(Context.CANCELED);

        // A WithCancelCause child of a custom context, cancelled with a cause; the parent is not cancelled.
        ccc = new CustomCauseContext();
        CancelCauseContext ctx = Context.withCancelCause(ccc);
        Exception cause = new Exception("TestCustomContextCause");
        ctx.cancel(cause);
        assertThat(ctx.err()).isSameAs(Context.CANCELED);
        assertThat(Context.cause(ctx)).isSameAs(cause);
        assertThat(ccc.err()).isNull();
        assertThat(Context.cause(ccc)).isNull();

        // Cancelling the custom parent now changes neither the child's err nor its cause.
        ccc.cancel();
        assertThat(ctx.err()).isSameAs(Context.CANCELED);
        assertThat(Context.cause(ctx)).isSameAs(cause);
        assertThat(ccc.err()).isSameAs(Context.CANCELED);
        assertThat(Context.cause(ccc)).isSameAs(Context.CANCELED);

        // A custom context that cancels its child itself.
        ccc = new CustomCauseContext();
        CancelContext ctx2 = Context.withCancel(ccc);
        ccc.setCancelChild(ctx2);
        ccc.cancel();
        assertThat(ctx2.err()).isSameAs(Context.CANCELED);
        assertThat(Context.cause(ctx2)).isSameAs(Context.CANCELED);
        assertThat(ccc.err()).isSameAs(Context.CANCELED);
        assertThat(Context.cause(ccc)).isSameAs(Context.CANCELED);
    }
}
