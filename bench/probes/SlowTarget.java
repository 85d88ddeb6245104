import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.net.httpserver.HttpServer;

/**
 * A local HTTP endpoint that answers every request after a fixed delay, the target of
 * bench/http-target.sh: each request waits on a virtual thread, so the target itself takes
 * any number of concurrent calls. Prints its port, then "served N" on stdin EOF or SIGTERM.
 *
 *   java bench/probes/SlowTarget.java DELAY_MS [PORT]
 */
public class SlowTarget {
    public static void main(String[] args) throws IOException {
        long delayMs = Long.parseLong(args[0]);
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        AtomicLong served = new AtomicLong();
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 65_535);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        byte[] answer = "{\"ok\":true}".getBytes();
        server.createContext("/", x -> {
            try (x) {
                x.getRequestBody().readAllBytes();
                Thread.sleep(delayMs);
                x.getResponseHeaders().set("Content-Type", "application/json");
                x.sendResponseHeaders(200, answer.length);
                try (OutputStream out = x.getResponseBody()) {
                    out.write(answer);
                }
                served.incrementAndGet();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        server.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.err.println("served " + served.get())));
        System.out.println(server.getAddress().getPort());
        System.out.flush();
    }
}
