package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * The list of all Gs: every registered G is found by a snapshot until it is retired, and adds and
 * retires from several threads at once leave the links whole (a lost or doubled link would show
 * as a wrong count, a G missing from the snapshot or a retired one still in it).
 */
class AllGsTest {

    @Test
    void aSnapshotHoldsExactlyTheRegisteredGsNotRetired() {
        AllGs all = new AllGs();
        List<G> gs = new ArrayList<>();
        List<AllGs.Ref> refs = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            G g = new G(null);
            gs.add(g);
            refs.add(all.add(g));
        }
        for (int i = 0; i < 100; i += 3) {
            all.retire(refs.get(i));
            all.retire(refs.get(i)); // a second retire is a no-op, not a second unlink
        }
        Set<G> expected = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            if (i % 3 != 0) {
                expected.add(gs.get(i));
            }
        }
        assertThat(all.size()).isEqualTo(expected.size());
        assertThat(all.snapshot()).containsExactlyInAnyOrderElementsOf(expected);
    }

    @Test
    void concurrentAddsAndRetiresKeepTheListWhole() throws Exception {
        AllGs all = new AllGs();
        int threads = 4, perThread = 100_000;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<List<G>> kept = new ArrayList<>();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            List<G> mine = new ArrayList<>();
            kept.add(mine);
            ts.add(Thread.ofPlatform().start(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                List<AllGs.Ref> live = new ArrayList<>();
                List<G> liveG = new ArrayList<>();
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < perThread; i++) {
                    if (!live.isEmpty() && rnd.nextInt(3) == 0) {
                        // Retire a random one, swapping the last into its place (O(1) removal).
                        int k = rnd.nextInt(live.size()), last = live.size() - 1;
                        all.retire(live.get(k));
                        live.set(k, live.get(last));
                        liveG.set(k, liveG.get(last));
                        live.remove(last);
                        liveG.remove(last);
                    } else {
                        G g = new G(null);
                        live.add(all.add(g));
                        liveG.add(g);
                    }
                    if (rnd.nextInt(10_000) == 0) {
                        all.snapshot(); // a walk amid the changes must end, and see no torn links
                    }
                }
                mine.addAll(liveG);
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        Set<G> expected = new HashSet<>();
        kept.forEach(expected::addAll);
        assertThat(all.size()).isEqualTo(expected.size());
        List<G> snapshot = all.snapshot();
        assertThat(snapshot).hasSize(expected.size());
        assertThat(new HashSet<>(snapshot)).isEqualTo(expected); // a set: AssertJ's any-order match is quadratic
    }
}
