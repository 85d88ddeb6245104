package io.gosched.service.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock that moves only when a test moves it, for the service's record times (submitted,
 * started, finished) and ages (retention): a test asserts them exactly instead of sleeping past
 * them. Safe to read from any thread. It does not drive the runtime's timers (goroutine sleeps,
 * job timeouts), which run on the runtime's own clock.
 */
public final class ManualClock extends Clock {

    private final AtomicReference<Instant> now;

    public ManualClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    /** Moves the clock forward by {@code d} and returns the new time. */
    public Instant advance(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("a clock does not go back: " + d);
        }
        return now.updateAndGet(t -> t.plus(d));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a manual clock is UTC");
    }
}
