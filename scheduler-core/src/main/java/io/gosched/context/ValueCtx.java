package io.gosched.context;

import io.gosched.runtime.Chan;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A context carrying one key-value pair; everything else is its parent's. Go: context.valueCtx
 */
final class ValueCtx implements Context {

    private final Context parent;
    private final Object key;
    private final Object val;

    ValueCtx(Context parent, Object key, Object val) {
        this.parent = Objects.requireNonNull(parent, "cannot create context from null parent");
        this.key = Objects.requireNonNull(key, "nil key");
        this.val = val;
    }

    @Override
    public Chan<?> done() {
        return parent.done();
    }

    @Override
    public RuntimeException err() {
        return parent.err();
    }

    @Override
    public Optional<Instant> deadline() {
        return parent.deadline();
    }

    @Override
    public Object value(Object k) {
        return lookup(this, k);
    }

    /**
     * The value for key in c or its ancestors. Walks the chain in a loop rather than by recursion
     * through value(), so a deep chain of contexts cannot overflow the stack; a context of a type
     * not in this package ends the walk by answering itself.
     * Go: context.value
     */
    static Object lookup(Context c, Object key) {
        for (;;) {
            switch (c) {
                case ValueCtx v -> {
                    if (v.key.equals(key)) {
                        return v.val;
                    }
                    c = v.parent;
                }
                case CancelCtx cc -> {
                    if (key == CancelCtx.KEY) {
                        return cc;
                    }
                    c = cc.parent();
                }
                case WithoutCancelCtx w -> {
                    if (key == CancelCtx.KEY) {
                        return null; // Cause(WithoutCancel(ctx)) is nil, as in Go
                    }
                    c = w.parent();
                }
                case Background b -> {
                    return null;
                }
                default -> {
                    return c.value(key);
                }
            }
        }
    }

    /** Go: context.stringify: a string as is, null as {@code <nil>}, else toString() if the type has one, else its type name. */
    static String stringify(Object v) {
        if (v == null) {
            return "<nil>";
        }
        if (v instanceof String s) {
            return s;
        }
        try {
            if (v.getClass().getMethod("toString").getDeclaringClass() != Object.class) {
                return v.toString();
            }
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e); // every class has toString()
        }
        return v.getClass().getTypeName();
    }

    @Override
    public String toString() {
        return parent + ".WithValue(" + stringify(key) + ", " + stringify(val) + ")";
    }
}
