package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * GoRuntime.start() on JVMs with and without SafeJvm.OPTIONS, each a child JVM started from
 * this test's classpath: the test JVM itself runs with the options, as every launch does.
 */
@Timeout(180)
class SafeJvmTest {

    record Result(int exit, String out, long pid) {
    }

    /** Runs main of the given class in a new JVM with jvmOptions (plus the continuation export). */
    static Result runJvm(Class<?> main, List<String> jvmOptions, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--add-exports");
        cmd.add("java.base/jdk.internal.vm=ALL-UNNAMED");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")).replace(' ', File.pathSeparatorChar));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("JDK_JAVA_OPTIONS");
        pb.environment().remove(SafeJvm.RELAUNCHED_ENV);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("child JVM finished: %s", out).isTrue();
        return new Result(p.exitValue(), out, p.pid());
    }

    /** Starts a runtime and runs one goroutine; prints "started". */
    public static final class StartMain {
        public static void main(String[] args) throws Exception {
            try (GoRuntime rt = GoRuntime.start()) {
                rt.run(() -> null);
            }
            System.out.println("started");
        }
    }

    /** Prints SafeJvm.isSafe(). */
    public static final class IsSafeMain {
        public static void main(String[] args) {
            System.out.println("safe=" + SafeJvm.isSafe());
        }
    }

    /** SchedulerTest.currentGoroutineIsRightAfterMigrating, as a program; exit 0 when clean. */
    public static final class GoidAfterMigrationMain {
        public static void main(String[] args) throws Exception {
            AtomicLong wrong = new AtomicLong();
            int gs = 4;
            int iters = 300_000;
            CountDownLatch done = new CountDownLatch(gs);
            try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
                for (int g = 0; g < gs; g++) {
                    rt.go(() -> {
                        long me = Go.goid();
                        for (int i = 0; i < iters; i++) {
                            Go.yield();
                            if (Go.goid() != me) {
                                wrong.incrementAndGet();
                            }
                        }
                        done.countDown();
                    });
                }
                if (!done.await(60, TimeUnit.SECONDS)) {
                    System.out.println("hung");
                    System.exit(2);
                }
            }
            System.out.println("wrong=" + wrong.get());
            System.exit(wrong.get() == 0 ? 0 : 1);
        }
    }

    /**
     * Prints a line before the relaunch (which must not be lost in a buffer), relaunches if
     * needed, then reports whether the JVM it runs in is safe, its pid and parent, the descriptors
     * it has open above standard error, and exits with 7.
     */
    public static final class RelaunchMain {
        static final Path HELD = Path.of(System.getProperty("java.home"), "release");

        public static void main(String[] args) throws Exception {
            System.out.print("before relaunch safe=" + SafeJvm.isSafe() + ";");
            // A file the first JVM holds open, as a launcher holds its jar: not the new JVM's
            // (which runs this main again, but does not open it).
            var held = System.getenv(SafeJvm.RELAUNCHED_ENV) == null ? new java.io.FileInputStream(HELD.toFile()) : null;
            SafeJvm.relaunchIfNeeded(args);
            System.out.println(" safe=" + SafeJvm.isSafe() + " args=" + String.join(",", args)
                    + " relaunched=" + (System.getenv(SafeJvm.RELAUNCHED_ENV) != null)
                    + " pid=" + ProcessHandle.current().pid()
                    + " parent=" + ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L)
                    + " fds=" + openFilesAboveStderr());
            if (held != null) {
                held.close();
            }
            System.exit(7);
        }

        /** The files this process has open above standard error (not sockets, pipes or JDK internals). */
        static java.util.List<String> openFilesAboveStderr() throws java.io.IOException {
            java.util.List<String> files = new ArrayList<>();
            try (var dir = java.nio.file.Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
                for (Path fd : dir) {
                    try {
                        if (Integer.parseInt(fd.getFileName().toString()) > 2) {
                            files.add(java.nio.file.Files.readSymbolicLink(fd).toString());
                        }
                    } catch (java.io.IOException | NumberFormatException gone) {
                        // the listing's own descriptor, closed by now
                    }
                }
            }
            return files;
        }
    }

    @Test
    void startRefusesAJvmWithoutTheOptionsAndNamesThemAndTheOptOut() throws Exception {
        Result r = runJvm(StartMain.class, List.of());
        assertThat(r.exit()).as(r.out()).isNotZero();
        assertThat(r.out()).doesNotContain("started")
                .contains("-XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread")
                .contains("-D" + SafeJvm.ALLOW_STALE_CURRENT_THREAD + "=true");
    }

    @Test
    void startRunsWithTheOptions() throws Exception {
        Result r = runJvm(StartMain.class, SafeJvm.OPTIONS);
        assertThat(r.exit()).as(r.out()).isZero();
        assertThat(r.out()).contains("started");
    }

    @Test
    void startRunsWithoutTheOptionsWhenTheUserGivesUpAFreshCurrentThread() throws Exception {
        Result r = runJvm(StartMain.class, List.of("-D" + SafeJvm.ALLOW_STALE_CURRENT_THREAD + "=true"));
        assertThat(r.exit()).as(r.out()).isZero();
        assertThat(r.out()).contains("started");
    }

    @Test
    void bothSpellingsOfTheOptionAndInterpretedModeCountAsSafe() throws Exception {
        assertThat(runJvm(IsSafeMain.class, List.of()).out()).contains("safe=false");
        assertThat(runJvm(IsSafeMain.class, SafeJvm.OPTIONS).out()).contains("safe=true");
        assertThat(runJvm(IsSafeMain.class, List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:ControlIntrinsic=-_currentThread")).out())
                .contains("safe=true");
        assertThat(runJvm(IsSafeMain.class, List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_getClass,_currentThread")).out())
                .contains("safe=true");
        assertThat(runJvm(IsSafeMain.class, List.of("-Xint")).out()).contains("safe=true");
        assertThat(runJvm(IsSafeMain.class, List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_getClass")).out())
                .contains("safe=false");
    }

    /** The runtime's own reads (getg, the current M) do not depend on the options. */
    @Test
    void runtimeKnowsItsGoroutineAfterMigratingEvenWithoutTheOptions() throws Exception {
        Result r = runJvm(GoidAfterMigrationMain.class, List.of("-D" + SafeJvm.ALLOW_STALE_CURRENT_THREAD + "=true"));
        assertThat(r.exit()).as(r.out()).isZero();
        assertThat(r.out()).contains("wrong=0");
    }

    /**
     * The relaunch replaces the process in place: the same pid and parent (no second process a
     * SIGKILL of the started pid would miss), the same command line with the options, output
     * printed before it kept, no descriptor of the first JVM leaked into the second, the new
     * JVM's exit status the process's, and no warning about native access when it is enabled.
     */
    @Test
    void relaunchReplacesTheProcessInPlaceWithTheOptions() throws Exception {
        Result r = runJvm(RelaunchMain.class, List.of("--enable-native-access=ALL-UNNAMED"), "a b", "c");
        assertThat(r.exit()).as(r.out()).isEqualTo(7);
        assertThat(r.out()).startsWith("before relaunch safe=false;")
                .contains(" safe=true args=a b,c relaunched=true pid=" + r.pid() + " parent=" + ProcessHandle.current().pid())
                .doesNotContain("WARNING");
        assertThat(r.out().substring(r.out().indexOf(" fds="))).as("files the first JVM held open")
                .doesNotContain(RelaunchMain.HELD.toString());
    }

    @Test
    void relaunchDoesNothingOnASafeJvm() throws Exception {
        Result r = runJvm(RelaunchMain.class, SafeJvm.OPTIONS, "x");
        assertThat(r.exit()).as(r.out()).isEqualTo(7);
        assertThat(r.out()).contains("before relaunch safe=true; safe=true args=x relaunched=false")
                .contains(RelaunchMain.HELD.toString()); // the held file shows in the listing
    }
}
