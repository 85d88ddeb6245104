package io.gosched.runtime;

/**
 * A proven deadlock: every goroutine that could ever run again is blocked forever. Thrown by
 * {@code io.gosched.testing.Synctest.test} when every goroutine of its bubble is durably blocked
 * and no bubble timer is pending, and by {@link GoRuntime#run} when main and every other goroutine
 * are asleep for ever, as the garbage collector proves (see Checkdead). The message is Go's text
 * (for a bubble {@code "deadlock: all goroutines in bubble are blocked"} or
 * {@code "deadlock: main bubble goroutine has exited but blocked goroutines remain"}; for run()
 * {@code "all goroutines are asleep - deadlock!"}), a blank line, then the goroutine dump of the goroutines involved (state, wait reason, stack), as
 * {@link GoRuntime#dumpGoroutines()} writes it.
 *
 * Go: runtime/synctest.go (fatal "deadlock: ..."), runtime/proc.go checkdead
 */
public class DeadlockException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String reason;
    private final String dump;

    /** A deadlock with Go's reason text and the goroutine dump that shows it. */
    public DeadlockException(String reason, String dump) {
        super(reason + "\n\n" + dump);
        this.reason = reason;
        this.dump = dump;
    }

    /** Go's text alone, without the dump. */
    public String reason() {
        return reason;
    }

    /** The goroutine dump of the blocked goroutines. */
    public String dump() {
        return dump;
    }
}
