package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.sync.Mutex;
import io.gosched.sync.WaitGroup;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Go.syscall bodies that make goroutine calls: each call leaves the syscall for its duration and
 * enters it again afterwards (Go's cgocallbackg), instead of parking a G that is in SYSCALL.
 */
@Timeout(60)
class SyscallTest {

    private static final ConcurrentLinkedQueue<Throwable> UNCAUGHT = new ConcurrentLinkedQueue<>();

    static GoRuntime runtime(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs)
                .onUncaughtException((thread, t) -> UNCAUGHT.add(t))
                .shutdownTimeout(Duration.ofSeconds(2)).build());
    }

    /** One goroutine operation made inside a syscall body; another goroutine completes it. */
    enum Op {
        RECV, SEND, SELECT, SLEEP, YIELD, MUTEX, WAITGROUP, PREEMPTED_CHECKPOINT, PREEMPTED_SAFE_POINT_POLL, NESTED_SYSCALL_RECV
    }

    /**
     * The operation runs inside Go.syscall while a partner goroutine completes it 50 ms later;
     * the body then finishes its blocking part in the syscall again, and the goroutine ends.
     */
    @ParameterizedTest
    @EnumSource(Op.class)
    void goroutineOperationInsideASyscallBody(Op op) throws Exception {
        UNCAUGHT.clear();
        try (GoRuntime rt = runtime(2)) {
            Chan<Integer> c = Chan.make();
            Mutex mu = new Mutex();
            WaitGroup wg = new WaitGroup();
            AtomicBoolean partnerDone = new AtomicBoolean();
            String result = rt.run(() -> {
                if (op == Op.MUTEX) {
                    mu.lock();
                }
                if (op == Op.WAITGROUP) {
                    wg.add(1);
                }
                Go.go(() -> {
                    Go.sleep(Duration.ofMillis(50));
                    switch (op) {
                        case RECV, NESTED_SYSCALL_RECV, SELECT -> c.send(42);
                        case SEND -> c.recv();
                        case MUTEX -> mu.unlock();
                        case WAITGROUP -> wg.done();
                        default -> {
                        }
                    }
                    partnerDone.set(true);
                });
                return Go.syscall(() -> {
                    assertThat(rt.stats().syscallThreads()).as("in a syscall before the operation").isPositive();
                    String r = switch (op) {
                        case RECV -> "got " + c.recv();
                        case NESTED_SYSCALL_RECV -> Go.syscall(() -> "got " + c.recv());
                        case SEND -> {
                            c.send(1);
                            yield "sent";
                        }
                        case SELECT -> "selected " + Select.select(Select.recv(c), Select.recv(Chan.make())).value();
                        case SLEEP -> {
                            Go.sleep(Duration.ofMillis(20));
                            yield "slept";
                        }
                        case YIELD -> {
                            for (int i = 0; i < 100; i++) {
                                Go.yield();
                            }
                            yield "yielded";
                        }
                        case MUTEX -> {
                            mu.lock();
                            mu.unlock();
                            yield "locked";
                        }
                        case WAITGROUP -> {
                            wg.await();
                            yield "waited";
                        }
                        case PREEMPTED_CHECKPOINT -> {
                            Scheduler.getg().preempt = true; // as if sysmon asked while we blocked
                            Go.checkpoint();
                            yield "checked";
                        }
                        case PREEMPTED_SAFE_POINT_POLL -> { // the preemption agent's poll in blocking code
                            G me = Scheduler.getg();
                            me.preempt = true;
                            SafePoint.raise(me.sched);
                            SafePoint.poll();
                            me.preempt = false;
                            SafePoint.lowerIfAnswered(me.sched, null);
                            yield "polled";
                        }
                    };
                    Thread.sleep(5); // the rest of the blocking code: in the syscall again
                    assertThat(Scheduler.getg().status()).as("back in the syscall after the operation").isEqualTo(G.SYSCALL);
                    return r;
                });
            });
            assertThat(result).isNotNull();
            assertThat(UNCAUGHT).as("uncaught exceptions (a dead M, a lost goready)").isEmpty();
            GoTesting.await("partner done", partnerDone::get);
            assertThat(rt.stats().syscallThreads()).isZero();
        }
    }

    /**
     * Go's cgocallbackg locks the goroutine to its M before leaving the syscall for a callback
     * ("the call from C is on gp.m's g0 stack, so we must ensure that we stay on that M"): the
     * blocking code around a callback runs on one thread from start to end, whatever the
     * callback waits for. Here the blocking code holds a ReentrantLock and a ThreadLocal across a
     * callback that parks until a goroutine on the other P sends; both must still be its own
     * afterwards. Repeated, on 2 Ps, with other goroutines to run meanwhile.
     */
    @Test
    void syscallCallbackKeepsTheBlockingCodeOnItsThread() throws Exception {
        UNCAUGHT.clear();
        ThreadLocal<Long> mine = new ThreadLocal<>();
        try (GoRuntime rt = runtime(2)) {
            java.util.List<String> moved = rt.run(() -> {
                java.util.List<String> out = new java.util.ArrayList<>();
                for (int round = 0; round < 100 * GoTesting.STRESS; round++) {
                    Chan<Integer> c = Chan.make();
                    WaitGroup busy = new WaitGroup();
                    for (int i = 0; i < 3; i++) {
                        busy.go(() -> {
                            for (int k = 0; k < 20; k++) {
                                Go.yield();
                            }
                        });
                    }
                    Go.go(() -> {
                        Go.sleep(Duration.ofMillis(1)); // the receiver parks first
                        c.send(1);
                    });
                    int r = round;
                    String what = Go.syscall(() -> {
                        java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
                        lock.lock(); // thread-affine state of the blocking code, as a driver's
                        Thread before = Thread.currentThread();
                        mine.set(before.threadId());
                        c.recv(); // the callback: parks until the sender runs
                        Thread after = Thread.currentThread();
                        String seen = after == before && mine.get() != null && mine.get() == before.threadId()
                                ? null : "round " + r + ": " + before.getName() + " -> " + after.getName();
                        try {
                            lock.unlock();
                        } catch (IllegalMonitorStateException e) {
                            seen = seen + " (and the lock's unlock failed: " + e + ")";
                        }
                        mine.remove();
                        return seen;
                    });
                    if (what != null) {
                        out.add(what);
                    }
                    busy.await();
                }
                return out;
            });
            assertThat(moved).as("syscall bodies that came back from a callback on another thread").isEmpty();
            assertThat(UNCAUGHT).isEmpty();
        }
    }

    /** Many goroutines receive inside syscall bodies from many senders: nothing is lost. */
    @Test
    void channelTrafficBetweenSyscallBodiesAndGoroutines() throws Exception {
        UNCAUGHT.clear();
        int n = 200 * GoTesting.STRESS;
        try (GoRuntime rt = runtime(2)) {
            Chan<Integer> c = Chan.make(4);
            AtomicLong sum = new AtomicLong();
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                int v = i;
                rt.go(() -> {
                    try {
                        sum.addAndGet(Go.syscall(c::recv));
                    } catch (Exception e) {
                        UNCAUGHT.add(e);
                    }
                    done.countDown();
                });
                rt.go(() -> c.send(v));
            }
            assertThat(done.await(30, TimeUnit.SECONDS)).as("receivers done").isTrue();
            assertThat(sum.get()).isEqualTo((long) n * (n - 1) / 2);
            assertThat(UNCAUGHT).isEmpty();
        }
    }

    /**
     * A monitor held across Go.syscall's slow exit (no P free: the G queues globally and resumes
     * on whichever M runs it): the monitor is released correctly on the M it resumed on.
     */
    @Test
    void monitorHeldAcrossTheSyscallSlowExit() throws Exception {
        UNCAUGHT.clear();
        Object monitor = new Object();
        try (GoRuntime rt = runtime(1)) {
            AtomicBoolean spin = new AtomicBoolean(true);
            String r = rt.run(() -> {
                // Keep the only P busy so exitsyscall finds no P and takes the slow path.
                Go.go(() -> {
                    while (spin.get()) {
                        Go.checkpoint();
                    }
                });
                Go.yield();
                long handoffs = rt.stats().handoffs();
                String out;
                M before = Scheduler.getg().m;
                synchronized (monitor) {
                    out = Go.syscall(() -> {
                        Thread.sleep(50); // sysmon retakes the P for the spinner meanwhile
                        return "done";
                    });
                    assertThat(Thread.holdsLock(monitor)).isTrue();
                    assertThat(Scheduler.getg().m).as("resumed on another M (the slow exit)").isNotSameAs(before);
                }
                assertThat(Thread.holdsLock(monitor)).isFalse();
                spin.set(false);
                assertThat(rt.stats().handoffs()).as("the P was handed off during the syscall").isGreaterThan(handoffs);
                return out;
            });
            assertThat(r).isEqualTo("done");
            assertThat(UNCAUGHT).isEmpty();
            // The monitor is free for another thread: it was released, not leaked.
            Thread t = Thread.ofPlatform().start(() -> {
                synchronized (monitor) {
                    monitor.notifyAll();
                }
            });
            t.join(5_000);
            assertThat(t.isAlive()).isFalse();
        }
    }
}
