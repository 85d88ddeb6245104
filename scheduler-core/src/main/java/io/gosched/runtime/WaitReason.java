package io.gosched.runtime;

/**
 * Why a goroutine is parked, as shown by {@code schedtrace} and stack dumps.
 * Go: runtime/runtime2.go waitReason
 */
enum WaitReason {
    CHAN_SEND("chan send"),
    CHAN_RECEIVE("chan receive"),
    CHAN_SEND_NIL_CHAN("chan send (nil chan)"),
    CHAN_RECEIVE_NIL_CHAN("chan receive (nil chan)"),
    SELECT("select"),
    SELECT_NO_CASES("select (no cases)"),
    SLEEP("sleep"),
    SEMACQUIRE("semacquire"),
    SYNC_MUTEX_LOCK("sync.Mutex.Lock"),
    SYNC_RWMUTEX_RLOCK("sync.RWMutex.RLock"),
    SYNC_RWMUTEX_LOCK("sync.RWMutex.Lock"),
    SYNC_WAITGROUP_WAIT("sync.WaitGroup.Wait"),
    IO_WAIT("IO wait"),
    TIMER("timer"),
    SYSCALL_EXIT("exitsyscall"),
    PREEMPTED("preempted"),
    FOREVER("forever"),
    // New reasons go last: trace events carry the ordinal.
    SYNC_COND_WAIT("sync.Cond.Wait"),
    // Durable waits inside a synctest bubble (see Bubble): the object waited on belongs to the
    // bubble, so only the bubble's own goroutines (or its clock) can end the wait.
    SYNCTEST_RUN("synctest.Run"),
    SYNCTEST_WAIT("synctest.Wait"),
    SYNCTEST_CHAN_RECEIVE("chan receive (durable)"),
    SYNCTEST_CHAN_SEND("chan send (durable)"),
    SYNCTEST_SELECT("select (durable)"),
    SYNCTEST_WAITGROUP_WAIT("sync.WaitGroup.Wait (durable)");

    private final String text;

    WaitReason(String text) {
        this.text = text;
    }

    private static final WaitReason[] VALUES = values();

    /**
     * Whether a bubble goroutine parked for this reason is durably blocked: only something of
     * its own bubble can wake it (a bubble channel, a bubble timer, Cond, a bubble WaitGroup).
     * Mutexes are not durable, as in Go: a mutex is held briefly, usually by a goroutine that is
     * running. Go: runtime/runtime2.go isIdleInSynctest
     */
    boolean durable() {
        return switch (this) {
            case CHAN_RECEIVE_NIL_CHAN, CHAN_SEND_NIL_CHAN, SELECT_NO_CASES, SLEEP, SYNC_COND_WAIT,
                    SYNCTEST_RUN, SYNCTEST_WAIT, SYNCTEST_CHAN_RECEIVE, SYNCTEST_CHAN_SEND, SYNCTEST_SELECT,
                    SYNCTEST_WAITGROUP_WAIT -> true;
            default -> false;
        };
    }

    /** As stored in a G: the ordinal + 1, 0 for none. */
    byte code() {
        return (byte) (ordinal() + 1);
    }

    static WaitReason of(byte code) {
        return code == 0 ? null : VALUES[code - 1];
    }

    /** The reason whose text is s. @throws IllegalArgumentException if none is */
    static WaitReason named(String s) {
        for (WaitReason r : VALUES) {
            if (r.text.equals(s)) {
                return r;
            }
        }
        throw new IllegalArgumentException("not one of Go's wait reasons: " + s);
    }

    @Override
    public String toString() {
        return text;
    }
}
