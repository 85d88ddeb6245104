package io.gosched.context;

import io.gosched.runtime.Chan;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A context with its parent's values but none of its cancellation: never done, no deadline, no
 * error, no cause. Go: context.withoutCancelCtx
 */
final class WithoutCancelCtx implements Context {

    private final Context parent;

    WithoutCancelCtx(Context parent) {
        this.parent = Objects.requireNonNull(parent, "cannot create context from null parent");
    }

    Context parent() {
        return parent;
    }

    /** Background's channel that never closes (Go returns a nil Done channel). */
    @Override
    public Chan<?> done() {
        return Background.INSTANCE.done();
    }

    @Override
    public RuntimeException err() {
        return null;
    }

    @Override
    public Optional<Instant> deadline() {
        return Optional.empty();
    }

    @Override
    public Object value(Object key) {
        return ValueCtx.lookup(this, key);
    }

    @Override
    public String toString() {
        return parent + ".WithoutCancel";
    }
}
