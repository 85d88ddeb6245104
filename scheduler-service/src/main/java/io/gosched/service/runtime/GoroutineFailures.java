package io.gosched.service.runtime;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Where the service's runtime sends an exception that escaped a goroutine (its uncaught-exception
 * policy): each registered owner is asked in turn whether the goroutine is one of its own (the job
 * engine: a goroutine labelled {@code job=<id>} of a job it runs) and, if so, fails what it owns
 * with it. What no owner takes is logged, and the runtime goes on.
 *
 * <p>Thread-safe. Owners are called on the dying goroutine itself, so that {@code Go.labels()}
 * and {@code Go.goid()} still name it; an owner must not block.
 */
public final class GoroutineFailures {

    /** One owner of goroutines. */
    @FunctionalInterface
    public interface Owner {
        /**
         * @return true if the goroutine was this owner's and the failure is handled (reported where
         *         its users see it)
         */
        boolean failed(long goid, Map<String, String> labels, Throwable e);
    }

    private final List<Owner> owners = new CopyOnWriteArrayList<>();

    /** Adds {@code owner}; closing the result removes it. */
    public AutoCloseable register(Owner owner) {
        owners.add(owner);
        return () -> owners.remove(owner);
    }

    /** True if an owner took the failure; false if none did (the caller logs it). */
    public boolean report(long goid, Map<String, String> labels, Throwable e) {
        for (Owner o : owners) {
            if (o.failed(goid, labels, e)) {
                return true;
            }
        }
        return false;
    }
}
