package io.gosched.sync;

import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.runtime.Chan;
import io.gosched.runtime.GoTesting.Mode;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Ports of Go's sync/once_test.go. */
class OnceTest {

    /** Go: TestOnce. 10 workers race; f runs once, and every run() returns after f finished. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testOnce(Mode mode) throws Exception {
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger sawUnfinished = new AtomicInteger();
        int[] value = new int[1];
        mode.run(4, () -> {
            for (int round = 0; round < 50; round++) {
                Once once = new Once();
                int[] v = new int[1];
                Chan<Boolean> done = Chan.make(10);
                for (int i = 0; i < 10; i++) {
                    spawn(() -> {
                        once.run(() -> {
                            runs.incrementAndGet();
                            for (int k = 0; k < 1000; k++) {
                                Thread.onSpinWait();
                            }
                            v[0] = 1;
                        });
                        if (v[0] != 1) {
                            sawUnfinished.incrementAndGet();
                        }
                        done.send(true);
                    });
                }
                for (int i = 0; i < 10; i++) {
                    done.recv();
                }
                value[0] += v[0];
            }
        });
        assertThat(runs.get()).as("f runs once per Once (%s)", mode).isEqualTo(50);
        assertThat(sawUnfinished.get()).as("run() returned before f finished (%s)", mode).isZero();
        assertThat(value[0]).isEqualTo(50);
    }

    /** Go: TestOncePanic. A throwing f counts as done and is not retried. */
    @Test
    void testOncePanic() {
        Once once = new Once();
        assertThatThrownBy(() -> once.run(() -> {
            throw new IllegalStateException("boom");
        })).hasMessage("boom");
        AtomicInteger ran = new AtomicInteger();
        once.run(ran::incrementAndGet);
        assertThat(ran.get()).as("Once.run called f twice").isZero();
        assertThat(once.isDone()).isTrue();
    }
}
