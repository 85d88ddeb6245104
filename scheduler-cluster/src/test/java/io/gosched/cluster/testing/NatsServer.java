package io.gosched.cluster.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;

/**
 * Debian's {@code nats-server} (2.9.x) as a child process: JetStream on, loopback only, a free
 * port, its store and log in a directory the test owns. {@link #kill()} is a real SIGKILL and
 * {@link #restart()} brings the same server back on the same port and store, so clients
 * reconnect by themselves and file storage is put to the test.
 *
 * <p>Without the binary, {@link #assumeInstalled()} skips the test with a message naming it.
 * Every process started here is also killed when the JVM exits, so a crashed test run leaves no
 * server behind.
 */
public final class NatsServer implements NatsFixture {

    /** Where Debian puts the binary; {@code NATS_SERVER} overrides, then {@code PATH} is searched. */
    public static final Path DEBIAN_BINARY = Path.of("/usr/sbin/nats-server");

    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly), "nats-fixture-reaper"));
    }

    private final Path binary;
    private final Path dir;
    private final List<String> extraArgs;
    private final String name;
    private int port;
    private Process process;

    private NatsServer(Path binary, Path dir, String name, int port, List<String> extraArgs) {
        this.binary = binary;
        this.dir = dir;
        this.name = name;
        this.port = port;
        this.extraArgs = List.copyOf(extraArgs);
    }

    /** The binary to run, if installed. */
    public static Optional<Path> binary() {
        String env = System.getenv("NATS_SERVER");
        if (env != null && !env.isBlank()) {
            Path p = Path.of(env);
            return Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
        }
        if (Files.isExecutable(DEBIAN_BINARY)) {
            return Optional.of(DEBIAN_BINARY);
        }
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        return Stream.of(path.split(":")).map(d -> Path.of(d, "nats-server")).filter(Files::isExecutable).findFirst();
    }

    /** Skips the calling test, naming the binary, when nats-server is not installed. */
    public static void assumeInstalled() {
        Assumptions.assumeTrue(binary().isPresent(), "nats-server missing: install the Debian package 'nats-server' "
                + "(.ci/run does) or set NATS_SERVER to the binary; looked for " + DEBIAN_BINARY + " and nats-server on PATH");
    }

    /** Starts one JetStream server with its store under {@code dir}; skips the test if the binary is missing. */
    public static NatsServer start(Path dir) {
        return start(dir, "n1", List.of());
    }

    /** Starts one server named {@code name} with its store under {@code dir} and more command-line arguments. */
    static NatsServer start(Path dir, String name, List<String> extraArgs) {
        assumeInstalled();
        NatsServer s = new NatsServer(binary().orElseThrow(), dir, name, freePort(), extraArgs);
        s.launch();
        return s;
    }

    @Override
    public String url() {
        return "nats://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    public String name() {
        return name;
    }

    public Path storeDir() {
        return dir.resolve("store");
    }

    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    @Override
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly(); // SIGKILL on Linux
        await(process, Duration.ofSeconds(10));
        LIVE.remove(process);
        process = null;
    }

    @Override
    public synchronized void restart() {
        if (isRunning()) {
            throw new IllegalStateException(name + " is running; kill() or close() it first");
        }
        launch();
    }

    @Override
    public boolean restartKeepsUrl() {
        return true;
    }

    @Override
    public synchronized void close() {
        if (process == null) {
            return;
        }
        process.destroy(); // SIGTERM: nats-server shuts down cleanly
        if (!await(process, Duration.ofSeconds(10))) {
            process.destroyForcibly();
            await(process, Duration.ofSeconds(5));
        }
        LIVE.remove(process);
        process = null;
    }

    @Override
    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(log(), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private Path log() {
        return dir.resolve("nats-server.log");
    }

    /** Starts the process and waits until it says it is ready; a port taken meanwhile gets another try. */
    private void launch() {
        try {
            Files.createDirectories(storeDir());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (int tries = 0; ; tries++) {
            List<String> cmd = new ArrayList<>(List.of(binary.toString(), "-js", "-sd", storeDir().toString(), "-a", "127.0.0.1",
                    "-p", Integer.toString(port), "-n", name));
            cmd.addAll(extraArgs);
            long logStart = logSize();
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()));
            try {
                process = pb.start();
            } catch (IOException e) {
                throw new UncheckedIOException("could not start " + binary, e);
            }
            LIVE.add(process);
            String outcome = awaitReady(logStart, Duration.ofSeconds(20));
            if (outcome == null) {
                return;
            }
            kill();
            if (outcome.contains("address already in use") && tries < 3) {
                port = freePort(); // lost the port to another process between probe and bind
                continue;
            }
            throw new IllegalStateException(name + " did not start (" + outcome + "): " + String.join(" ", cmd) + "\n" + logTail());
        }
    }

    /** Null once the log since {@code from} says the server is ready, else why not. */
    private String awaitReady(long from, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            String text = logSince(from);
            if (text.contains("Server is ready")) {
                return null;
            }
            if (!process.isAlive()) {
                return text.toLowerCase().contains("address already in use") ? "address already in use" : "exited " + process.exitValue();
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
        return "not ready after " + timeout;
    }

    private long logSize() {
        try {
            return Files.exists(log()) ? Files.size(log()) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    private String logSince(long from) {
        try {
            byte[] all = Files.readAllBytes(log());
            return new String(all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static boolean await(Process p, Duration d) {
        try {
            return p.waitFor(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** A port the OS just had free on loopback. */
    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
