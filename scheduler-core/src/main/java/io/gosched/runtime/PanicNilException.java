package io.gosched.runtime;

/**
 * Go 1.21's {@code panic(nil)} turned into a real error: what a caller gets where Go would
 * re-panic with the nil value a {@code recover()} returned during a Goexit. Java has no
 * {@code panic(nil)}; the one place the runtime's packages meet it is {@code Once.onceFunc},
 * {@code onceValue} and {@code onceValues} whose function ended by {@link Go#goexit()}: every
 * call of the wrapper throws this, the first included, instead of ending its caller's goroutine.
 *
 * <p>JVM departure: in Go, when the first caller recovers this panic its goroutine still ends
 * (the Goexit it interrupted resumes); a Java catch of this exception simply goes on.
 *
 * Go: runtime.PanicNilError
 */
public final class PanicNilException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Go's text, then what here stands for the nil panic. */
    public PanicNilException(String detail) {
        super("panic called with nil argument (see issue 25448): " + detail);
    }
}
