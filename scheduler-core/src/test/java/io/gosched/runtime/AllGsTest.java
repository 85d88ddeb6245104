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
            refs.add(all.add(g, null));
        }
        for (int i = 0; i < 100; i += 3) {
            all.retire(refs.get(i), null);
            all.retire(refs.get(i), null); // a second retire is a no-op, not a second unlink
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

    /**
     * Ps add through their own buffers and retire each other's Gs (a G made on one P often exits
     * on another): whatever the interleaving of a buffer's flush with a retire from another P,
     * a snapshot holds exactly the Gs not retired, none twice. Threads without buffers (Gs made
     * outside the Ps) take part too.
     */
    @Test
    void concurrentAddsAndRetiresKeepTheListWhole() throws Exception {
        AllGs all = new AllGs();
        int threads = 4, perThread = 100_000;
        CyclicBarrier start = new CyclicBarrier(threads);
        java.util.concurrent.ConcurrentLinkedQueue<AllGs.Ref> exiting = new java.util.concurrent.ConcurrentLinkedQueue<>();
        java.util.Map<AllGs.Ref, G> handedOver = new java.util.concurrent.ConcurrentHashMap<>();
        List<List<G>> kept = new ArrayList<>();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            List<G> mine = new ArrayList<>();
            kept.add(mine);
            AllGs.Buffers buffers = t == 0 ? null : all.newBuffers();
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
                    int dice = rnd.nextInt(6);
                    if (!live.isEmpty() && dice < 2) {
                        // Retire a random one, swapping the last into its place (O(1) removal).
                        int k = rnd.nextInt(live.size()), last = live.size() - 1;
                        all.retire(live.get(k), buffers);
                        live.set(k, live.get(last));
                        liveG.set(k, liveG.get(last));
                        live.remove(last);
                        liveG.remove(last);
                    } else if (!live.isEmpty() && dice == 2) {
                        // Hand one over to exit on another thread.
                        int last = live.size() - 1;
                        handedOver.put(live.get(last), liveG.get(last));
                        exiting.add(live.remove(last));
                        liveG.remove(last);
                    } else if (dice == 3) {
                        AllGs.Ref r = exiting.poll();
                        if (r != null) {
                            all.retire(r, buffers);
                            handedOver.remove(r);
                        }
                    } else {
                        G g = new G(null);
                        live.add(all.add(g, buffers));
                        liveG.add(g);
                    }
                    if (rnd.nextInt(10_000) == 0) {
                        all.snapshot(); // a walk amid the changes must end, and see no torn links
                    }
                }
                if (buffers != null) {
                    all.flush(buffers); // as a destroyed P does: from now on the list holds them all
                }
                mine.addAll(liveG);
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        Set<G> expected = new HashSet<>();
        kept.forEach(expected::addAll);
        expected.addAll(handedOver.values()); // handed over, not retired yet
        List<G> snapshot = all.snapshot();
        assertThat(snapshot).hasSize(expected.size());
        assertThat(new HashSet<>(snapshot)).isEqualTo(expected); // a set: AssertJ's any-order match is quadratic
        assertThat(all.size()).as("linked Refs, every buffer flushed").isEqualTo(expected.size());
    }
}
