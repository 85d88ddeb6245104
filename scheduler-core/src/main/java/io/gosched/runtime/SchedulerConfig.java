package io.gosched.runtime;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Immutable runtime settings; build with {@link #builder()}. Every setter validates its input
 * and names the setting in the exception.
 */
public final class SchedulerConfig {

    /** The most Ps a runtime may have (the steal order packs indices in 16 bits). */
    public static final int MAX_GOMAXPROCS = 1024;

    private final int gomaxprocs;
    private final Duration preemptQuantum;
    private final Duration shutdownTimeout;
    private final PanicPolicy panicPolicy;
    private final Thread.UncaughtExceptionHandler uncaughtExceptionHandler;
    private final boolean sysmon;
    private final boolean randomizeScheduling;
    private final boolean directHandOff;
    private final long seed;
    private final int runqSize;
    private final LongSupplier nanoClock;
    private final String name;

    private SchedulerConfig(Builder b) {
        this.gomaxprocs = b.gomaxprocs;
        this.preemptQuantum = b.preemptQuantum;
        this.shutdownTimeout = b.shutdownTimeout;
        this.panicPolicy = b.panicPolicy;
        this.uncaughtExceptionHandler = b.uncaughtExceptionHandler;
        this.sysmon = b.sysmon;
        this.randomizeScheduling = b.randomizeScheduling;
        this.directHandOff = b.directHandOff;
        this.seed = b.seed;
        this.runqSize = b.runqSize;
        this.nanoClock = b.nanoClock;
        this.name = b.name;
    }

    /** GOMAXPROCS = available processors, 10 ms preemption quantum, 10 s shutdown timeout. */
    public static SchedulerConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder pre-filled with this configuration's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.gomaxprocs = gomaxprocs;
        b.preemptQuantum = preemptQuantum;
        b.shutdownTimeout = shutdownTimeout;
        b.panicPolicy = panicPolicy;
        b.uncaughtExceptionHandler = uncaughtExceptionHandler;
        b.sysmon = sysmon;
        b.randomizeScheduling = randomizeScheduling;
        b.directHandOff = directHandOff;
        b.seed = seed;
        b.runqSize = runqSize;
        b.nanoClock = nanoClock;
        b.name = name;
        return b;
    }

    /** Initial number of Ps. */
    public int gomaxprocs() {
        return gomaxprocs;
    }

    /** How long a G may run before sysmon asks it to yield (Go: forcePreemptNS, 10 ms). */
    public Duration preemptQuantum() {
        return preemptQuantum;
    }

    /** What {@link GoRuntime#close()} waits for goroutines to end. */
    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    /**
     * What an exception that ends a goroutine does: {@link PanicPolicy#CRASH} (the default, Go's
     * rule) or {@link PanicPolicy#LOG}; with a custom handler ({@link
     * Builder#onUncaughtException(Thread.UncaughtExceptionHandler)}) this is LOG and the handler
     * takes the place of the log line.
     */
    public PanicPolicy panicPolicy() {
        return panicPolicy;
    }

    /** The custom handler of uncaught exceptions, or null when {@link #panicPolicy()} decides alone. */
    public Thread.UncaughtExceptionHandler uncaughtExceptionHandler() {
        return uncaughtExceptionHandler;
    }

    /** Whether the sysmon thread runs (preemption, syscall retake, network polling). */
    public boolean sysmon() {
        return sysmon;
    }

    /**
     * Test hook: randomizes run-queue decisions to shake out ordering assumptions, as Go does
     * under the race detector (randomizeScheduler): a G readied or created with "run next" goes
     * to the tail of the queue instead half the time, and the half of a full ring that spills to
     * the global queue is shuffled. Off by default; off costs nothing measurable. Programs that
     * are correct under any interleaving behave the same with it on.
     */
    public boolean randomizeScheduling() {
        return randomizeScheduling;
    }

    /**
     * Whether a goroutine parking in a channel operation runs the partner that readied it last
     * on top of its own frames (Scheduler, "Direct hand-off"): a ping-pong round trip costs one
     * continuation switch instead of two. Off by default, because it weakens one guarantee: a
     * goroutine run on top that blocks its thread in the JDK (a lock, a latch, I/O not wrapped in
     * {@code Go.syscall}) keeps the partner under it from running until it returns, where
     * otherwise sysmon's spare P would run that partner; a goroutine waiting so for its partner
     * then never wakes. Turn it on for programs whose goroutines wait for each other only through
     * the runtime (channels, select, sync, time, net, Go.syscall). Default: the system property
     * {@code gosched.directHandOff}.
     */
    public boolean directHandOff() {
        return directHandOff;
    }

    /** Seed of the per-P random sources (steal order, sampling). */
    public long seed() {
        return seed;
    }

    /** Local run queue capacity, a power of two (Go: 256; tests use smaller). */
    public int runqSize() {
        return runqSize;
    }

    /**
     * The runtime's clock, in nanoseconds (Go: nanotime): what its timers, sleeps, tickers,
     * context and network deadlines, sysmon and the preemption quantum go by; injectable for
     * tests. Monotonic, like System.nanoTime (the default). Diagnostics (traces, the latency
     * histogram, uptime) and the bounds on how long real threads are waited for (shutdown) stay
     * on System.nanoTime. A synctest bubble's members use the bubble's fake clock instead.
     */
    public LongSupplier nanoClock() {
        return nanoClock;
    }

    /** Whether nanoClock is the default System.nanoTime, which the runtime then calls directly. */
    boolean systemClock() {
        return nanoClock == SYSTEM_CLOCK;
    }

    private static final LongSupplier SYSTEM_CLOCK = System::nanoTime;

    /** A name for the runtime's threads' group. */
    public String name() {
        return name;
    }

    @Override
    public String toString() {
        return "SchedulerConfig[gomaxprocs=" + gomaxprocs + ", preemptQuantum=" + preemptQuantum
                + ", shutdownTimeout=" + shutdownTimeout + ", onUncaughtException="
                + (uncaughtExceptionHandler != null ? "handler" : panicPolicy) + ", sysmon=" + sysmon + ", runqSize=" + runqSize
                + ", name=" + name + "]";
    }

    /**
     * What an exception that escapes a goroutine's body does to the runtime. A goroutine ended by
     * {@link Go#goexit()} is not one: nothing happens. The main goroutine of {@link
     * GoRuntime#run} is not one either: run() returns its exception to its caller.
     */
    public enum PanicPolicy {
        /**
         * Go's rule, and the default: an unrecovered panic ends the program. The first such
         * exception is printed to standard error with the goroutines' state, every goroutine is
         * stopped (none runs again; parked ones are abandoned, their {@code finally} blocks do
         * not run, as deferred calls of other goroutines do not run when a Go program panics),
         * the runtime shuts down, and {@link GoRuntime#run} (the one in progress and any later
         * one) throws a {@link GoroutinePanicException} whose cause is the exception.
         */
        CRASH,
        /** The exception is printed to standard error with the goroutine's id; the runtime goes on. */
        LOG
    }

    /** Validating builder for {@link SchedulerConfig}. */
    public static final class Builder {
        private int gomaxprocs = Math.min(MAX_GOMAXPROCS, Runtime.getRuntime().availableProcessors());
        private Duration preemptQuantum = Duration.ofMillis(10);
        private Duration shutdownTimeout = Duration.ofSeconds(10);
        private PanicPolicy panicPolicy = PanicPolicy.CRASH;
        private Thread.UncaughtExceptionHandler uncaughtExceptionHandler;
        private boolean sysmon = true;
        private boolean randomizeScheduling;
        private boolean directHandOff = Boolean.getBoolean("gosched.directHandOff");
        private long seed = System.nanoTime();
        private int runqSize = Scheduler.RUNQ_SIZE;
        private LongSupplier nanoClock = SYSTEM_CLOCK;
        private String name = "gosched";

        private Builder() {
        }

        public Builder gomaxprocs(int n) {
            if (n < 1 || n > MAX_GOMAXPROCS) {
                throw new IllegalArgumentException("gomaxprocs must be between 1 and " + MAX_GOMAXPROCS + ": " + n);
            }
            this.gomaxprocs = n;
            return this;
        }

        public Builder preemptQuantum(Duration d) {
            Objects.requireNonNull(d, "preemptQuantum");
            if (d.compareTo(Duration.ofMillis(1)) < 0 || d.compareTo(Duration.ofSeconds(10)) > 0) {
                throw new IllegalArgumentException("preemptQuantum must be between 1ms and 10s: " + d);
            }
            this.preemptQuantum = d;
            return this;
        }

        public Builder shutdownTimeout(Duration d) {
            Objects.requireNonNull(d, "shutdownTimeout");
            if (d.isNegative()) {
                throw new IllegalArgumentException("shutdownTimeout must not be negative: " + d);
            }
            this.shutdownTimeout = d;
            return this;
        }

        /**
         * What an exception that ends a goroutine does (see {@link PanicPolicy}). Replaces a
         * handler set before.
         */
        public Builder onUncaughtException(PanicPolicy policy) {
            this.panicPolicy = Objects.requireNonNull(policy, "onUncaughtException");
            this.uncaughtExceptionHandler = null;
            return this;
        }

        /**
         * Hands an exception that ends a goroutine to handler, and the runtime goes on (as {@link
         * PanicPolicy#LOG}, with handler in place of the log line). The handler runs in the
         * failing goroutine, after its frames have unwound: {@code Go.goid()} names it; the
         * {@code Thread} argument is the M that carries it. An exception the handler throws is
         * dropped (it must not take the M down).
         */
        public Builder onUncaughtException(Thread.UncaughtExceptionHandler handler) {
            this.uncaughtExceptionHandler = Objects.requireNonNull(handler, "onUncaughtException");
            this.panicPolicy = PanicPolicy.LOG;
            return this;
        }

        public Builder sysmon(boolean on) {
            this.sysmon = on;
            return this;
        }

        public Builder randomizeScheduling(boolean on) {
            this.randomizeScheduling = on;
            return this;
        }

        /** See {@link SchedulerConfig#directHandOff()}. */
        public Builder directHandOff(boolean on) {
            this.directHandOff = on;
            return this;
        }

        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public Builder runqSize(int size) {
            if (size < 4 || size > 1 << 16 || Integer.bitCount(size) != 1) {
                throw new IllegalArgumentException("runqSize must be a power of two between 4 and 65536: " + size);
            }
            this.runqSize = size;
            return this;
        }

        public Builder nanoClock(LongSupplier clock) {
            this.nanoClock = Objects.requireNonNull(clock, "nanoClock");
            return this;
        }

        public Builder name(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank");
            }
            this.name = name;
            return this;
        }

        public SchedulerConfig build() {
            return new SchedulerConfig(this);
        }
    }
}
