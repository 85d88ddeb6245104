import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Probe (not part of the build): where virtual threads' ping-pong time goes. Runs the peer
 * comparison's virtual-thread ping-pong (two {@link SynchronousQueue}s, as VirtualThreadPeer
 * does) round after round and prints per round: ns a round trip, the process's CPU time a round
 * trip (all threads, from the OS), the voluntary and involuntary context switches a round trip
 * (every thread of the process, /proc/self/task/N/status) and, with the vtcount agent loaded
 * (bench/probes/vtcount/build.sh), the unmounts of virtual threads a round trip (every
 * VirtualThread.yieldContinuation: a park that gave up its carrier) and the SynchronousQueue
 * waits (LinkedTransferQueue's DualNode.await: a put or take that found no partner waiting, and
 * so spins, then parks). JFR's jdk.ContinuationFreeze* events would count the unmounts too, but
 * a product JDK 25 does not emit them (0 events with every one enabled).
 *
 * <pre>
 * bench/probes/vtcount/build.sh
 * java -javaagent:/tmp/vtcount.jar -Djdk.virtualThreadScheduler.parallelism=2 \
 *   -Djdk.virtualThreadScheduler.maxPoolSize=2 -XX:+UseCompactObjectHeaders -Xms3g -Xmx3g \
 *   -XX:+AlwaysPreTouch bench/probes/VirtualThreadHandOff.java pingpong 8 1000000
 * </pre>
 * Modes: "pingpong" (two SynchronousQueues), "split" (the same, both virtual threads started on
 * carriers of their own, see pingpong), "nospin" (the same hand-off through a slot that parks at
 * once: LockSupport park/unpark of the partner, no spinning, as a control for what an unmount
 * per hop costs), "chain" (10,000 virtual threads over SynchronousQueues, n traversals, reported
 * per hop).
 */
public class VirtualThreadHandOff {

    public static void main(String[] a) throws Exception {
        String mode = a[0];
        if (mode.equals("split") && "1".equals(System.getProperty("jdk.virtualThreadScheduler.parallelism"))) {
            throw new IllegalArgumentException("split needs two carriers: its main thread waits for the partner on its own");
        }
        int rounds = Integer.parseInt(a[1]);
        long n = Long.parseLong(a[2]);
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int r = 0; r < rounds; r++) {
            long[] vc0 = vtCounts();
            long[] cs0 = contextSwitches();
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            long ops = switch (mode) {
                case "pingpong" -> pingpong(n, false);
                case "split" -> pingpong(n, true);
                case "nospin" -> nospin(n);
                case "chain" -> chain(n);
                default -> throw new IllegalArgumentException(mode);
            };
            long wall = System.nanoTime() - t0;
            long cpu = os.getProcessCpuTime() - cpu0;
            long[] cs1 = contextSwitches();
            long[] vc1 = vtCounts();
            String line = String.format("round %d %.1f ns cpu %.1f ns vcs %.4f ivcs %.4f", r, (double) wall / ops,
                    (double) cpu / ops, (double) (cs1[0] - cs0[0]) / ops, (double) (cs1[1] - cs0[1]) / ops);
            if (vc0 != null) {
                line += String.format(" unmounts %.4f awaits %.4f", (double) (vc1[0] - vc0[0]) / ops,
                        (double) (vc1[1] - vc0[1]) / ops);
            }
            System.out.println(line);
        }
    }

    /**
     * Unmounts and SynchronousQueue awaits so far, from the vtcount agent
     * (bench/probes/vtcount), or null when it is not loaded.
     */
    static long[] vtCounts() throws Exception {
        Class<?> c;
        try {
            c = Class.forName("vtcount.VtCount", true, null);
        } catch (ClassNotFoundException none) {
            return null;
        }
        var sum = c.getMethod("sum", int.class);
        return new long[] {(long) sum.invoke(null, 0), (long) sum.invoke(null, 1)};
    }

    /** Sum over the process's threads of voluntary and involuntary context switches. */
    static long[] contextSwitches() throws Exception {
        long v = 0, iv = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    for (String l : Files.readAllLines(t.resolve("status"))) {
                        if (l.startsWith("voluntary_ctxt_switches:")) v += Long.parseLong(l.substring(24).trim());
                        else if (l.startsWith("nonvoluntary_ctxt_switches:")) iv += Long.parseLong(l.substring(27).trim());
                    }
                } catch (java.io.IOException gone) {
                    // a thread that ended meanwhile
                }
            }
        }
        return new long[] {v, iv};
    }

    static long inVirtual(java.util.concurrent.Callable<Long> body) throws Exception {
        AtomicLong out = new AtomicLong();
        Thread t = Thread.startVirtualThread(() -> {
            try {
                out.set(body.call());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        t.join();
        return out.get();
    }

    static volatile boolean partnerStarted;

    /**
     * The peer's ping-pong. With split, the main virtual thread waits on its carrier, without
     * unmounting, until the partner runs (so on the other carrier) and is about to take, and
     * only then sends the first ping: both start on carriers of their own with empty local
     * queues, the state in which SynchronousQueue's spin before parking can find its partner.
     */
    static long pingpong(long n, boolean split) throws Exception {
        return inVirtual(() -> {
            SynchronousQueue<Long> ping = new SynchronousQueue<>(), pong = new SynchronousQueue<>();
            partnerStarted = false;
            Thread p = Thread.startVirtualThread(() -> {
                try {
                    partnerStarted = true;
                    for (long i = 0; i < n; i++) pong.put(ping.take() + 1);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            while (split && !partnerStarted) {
                Thread.onSpinWait();
            }
            long sum = 0;
            for (long i = 0; i < n; i++) {
                ping.put(i);
                sum += pong.take();
            }
            p.join();
            if (sum != n * (n + 1) / 2) throw new AssertionError(sum);
            return n;
        });
    }

    /** A one-slot hand-off that never spins: the taker parks at once (LockSupport), the putter unparks it. */
    static final class Slot {
        volatile Long v;
        volatile Thread taker;

        void put(Long x) {
            v = x;
            Thread t = taker;
            if (t != null) java.util.concurrent.locks.LockSupport.unpark(t);
        }

        Long take() {
            Long x;
            taker = Thread.currentThread();
            while ((x = v) == null) {
                java.util.concurrent.locks.LockSupport.park(this);
            }
            v = null;
            return x;
        }
    }

    static long nospin(long n) throws Exception {
        return inVirtual(() -> {
            Slot ping = new Slot(), pong = new Slot();
            Thread p = Thread.startVirtualThread(() -> {
                for (long i = 0; i < n; i++) pong.put(ping.take() + 1);
            });
            long sum = 0;
            for (long i = 0; i < n; i++) {
                ping.put(i);
                sum += pong.take();
            }
            p.join();
            if (sum != n * (n + 1) / 2) throw new AssertionError(sum);
            return n;
        });
    }

    static long chain(long traversals) throws Exception {
        int n = 10_000;
        return inVirtual(() -> {
            @SuppressWarnings("unchecked")
            SynchronousQueue<Long>[] links = new SynchronousQueue[n + 1];
            for (int i = 0; i <= n; i++) links[i] = new SynchronousQueue<>();
            for (int i = 0; i < n; i++) {
                SynchronousQueue<Long> in = links[i], out = links[i + 1];
                Thread.startVirtualThread(() -> {
                    try {
                        for (long t = 0; t < traversals; t++) out.put(in.take() + 1);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            long sum = 0;
            for (long t = 0; t < traversals; t++) {
                links[0].put(0L);
                sum += links[n].take();
            }
            if (sum != (long) n * traversals) throw new AssertionError(sum);
            return (long) n * traversals;
        });
    }
}
