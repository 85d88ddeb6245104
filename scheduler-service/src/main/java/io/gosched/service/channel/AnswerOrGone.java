package io.gosched.service.channel;

import java.util.concurrent.atomic.AtomicBoolean;

import reactor.core.publisher.Mono;

/**
 * Exactly one of two things ends a channel call an HTTP client waits on: its answer goes out, or
 * the client went away first and {@code gone} undoes what the call did (withdraws a pending
 * operation, puts a taken value back). The client's going away is a cancel on the connection's
 * thread, while the answer may be on its way on another (a select's goroutine, a channel's
 * waker): both claim one flag, and the loser does nothing. An answer that lost is dropped here,
 * so it is neither counted nor sent while its value is also put back.
 */
final class AnswerOrGone {

    private AnswerOrGone() {
    }

    /** {@code answer}, or {@code gone} run once if the subscriber cancels before it came. */
    static <T> Mono<T> of(Mono<T> answer, Runnable gone) {
        AtomicBoolean settled = new AtomicBoolean();
        return answer
                .filter(a -> settled.compareAndSet(false, true))
                .doOnCancel(() -> {
                    if (settled.compareAndSet(false, true)) {
                        gone.run();
                    }
                });
    }
}
