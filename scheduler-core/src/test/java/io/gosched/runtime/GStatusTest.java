package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * casgstatus against goroutine snapshots: a snapshot flips a RUNNABLE or WAITING G to its SCAN
 * status and back, as often as it likes (GoRuntime.goroutines in a loop does), and a transition
 * that must succeed waits that out however the flips fall between its read and its CAS. Only a
 * status that is neither the expected one nor its SCAN form is a bug worth throwing for.
 */
class GStatusTest {

    @Test
    void aTransitionThatMustSucceedWaitsOutRepeatedScans() throws Exception {
        G g = new G(null);
        g.initStatus(G.RUNNABLE);
        int rounds = 2_000_000;
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread scanner = Thread.ofPlatform().start(() -> {
            await(start);
            while (!Thread.currentThread().isInterrupted()) {
                if (g.tryBeginScan(G.RUNNABLE)) {
                    g.endScan(G.RUNNABLE);
                }
            }
        });
        Thread m = Thread.ofPlatform().start(() -> {
            await(start);
            try {
                for (int i = 0; i < rounds; i++) {
                    g.casgstatus(G.RUNNABLE, G.RUNNING); // execute
                    g.casgstatus(G.RUNNING, G.RUNNABLE); // goschedImpl
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        start.countDown();
        m.join();
        scanner.interrupt();
        scanner.join();
        assertThat(failed.get()).as("casgstatus under snapshots").isNull();
        assertThat(g.status()).isEqualTo(G.RUNNABLE);
    }

    @Test
    void aWrongStatusStillFailsLoudly() {
        G g = new G(null);
        g.initStatus(G.WAITING);
        assertThatThrownBy(() -> g.casgstatus(G.RUNNABLE, G.RUNNING))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("goroutine").hasMessageContaining("expected runnable -> running");
    }

    private static void await(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
