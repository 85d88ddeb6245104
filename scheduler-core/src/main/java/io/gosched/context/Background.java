package io.gosched.context;

import io.gosched.runtime.Chan;
import java.time.Instant;
import java.util.Optional;

/** The root context. Go: context.backgroundCtx */
final class Background implements Context {

    static final Background INSTANCE = new Background();

    /** Never closed: receiving from it blocks forever, as from Go's nil Done channel. */
    private final Chan<Object> never = Chan.never();

    private Background() {
    }

    @Override
    public Chan<?> done() {
        return never;
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
        return null;
    }

    @Override
    public String toString() {
        return "context.Background";
    }
}
