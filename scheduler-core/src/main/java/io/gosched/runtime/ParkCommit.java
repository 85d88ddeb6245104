package io.gosched.runtime;

/**
 * Go's {@code unlockf} for {@code gopark}: runs on the M after the goroutine has been unmounted
 * and marked waiting, typically to release the lock that guards the wait queue the goroutine
 * was put on. Releasing the lock only now is what prevents a lost wake-up: a waker that takes
 * the lock afterwards always finds a goroutine that is really parked.
 *
 * <p>Returning false cancels the park: nobody else may have readied the goroutine, and it
 * resumes at once on the same M.
 */
@FunctionalInterface
interface ParkCommit {
    boolean commit(G gp, Object arg);
}
