package io.gosched.bench.peer;

import io.gosched.bench.Peer;
import io.gosched.bench.Result;
import io.gosched.bench.BenchWorkload;
import io.gosched.bench.kotlin.KotlinPeer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * One peer as a long-lived process the comparison driver talks to, one line at a time, so that
 * the peers' rounds can be interleaved while each keeps its JIT-warm JVM. The Go peer
 * ({@code bench/go/main.go}) speaks the same protocol:
 * <pre>
 *   peer   -> HELLO &lt;version text&gt;
 *   driver -> RUN &lt;workload&gt; &lt;n&gt; &lt;m&gt;      peer -> OK check=C metric=v ... | ERR &lt;message&gt;
 *   driver -> QUIT
 * </pre>
 * Before each run the peer collects garbage (untimed), as the Go peer calls runtime.GC, so one
 * workload's garbage is not billed to the next.
 *
 * <p>Usage: {@code PeerMain <gosched|vt|kotlin> <procs>}; for vt and kotlin the parallelism is a
 * JVM-wide system property the driver sets on the command line.
 */
public final class PeerMain {
    private PeerMain() {}

    public static Peer create(String name, int procs) {
        return switch (name) {
            case "vt" -> new VirtualThreadPeer();
            case "kotlin" -> new KotlinPeer();
            case "gosched" -> new GoschedPeer(procs);
            default -> throw new IllegalArgumentException("unknown JVM peer " + name);
        };
    }

    public static void main(String[] args) throws Exception {
        // The protocol owns stdout; anything else a runtime prints goes to stderr.
        PrintStream proto = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        try (Peer peer = create(args[0], Integer.parseInt(args[1]))) {
            proto.println("HELLO " + peer.version());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.trim().split("\\s+");
                if (f[0].equals("QUIT")) break;
                if (!f[0].equals("RUN") || f.length != 4) {
                    proto.println("ERR bad command: " + line);
                    continue;
                }
                try {
                    System.gc();
                    Result r = peer.run(BenchWorkload.of(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]));
                    proto.println("OK " + r.toLine());
                } catch (Throwable e) {
                    e.printStackTrace();
                    proto.println("ERR " + e.toString().replace('\n', ' '));
                }
            }
        }
        System.exit(0);
    }
}
