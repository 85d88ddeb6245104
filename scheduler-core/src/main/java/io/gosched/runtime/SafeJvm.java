package io.gosched.runtime;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Whether this JVM runs ordinary Java code in goroutines correctly, and how to make it so.
 *
 * <p>C2 treats {@code Thread.currentThread()} as a constant within one compiled method. A
 * goroutine's compiled frame spans its parks, and a goroutine resumes on whichever M runs it
 * next, so without {@link #OPTIONS} compiled goroutine code may keep using the thread it left:
 * a {@code ReentrantLock} is unlocked in another thread's name ({@code
 * IllegalMonitorStateException}, two goroutines inside it, the lock leaked), a {@code
 * ThreadLocal} hands out another thread's unsynchronised state, {@code ThreadLocalRandom} and
 * the JDK's own locks ({@code PrintStream}, logging appenders) break the same way. The runtime's
 * own code is safe either way (see "The current thread" in M); user code is not.
 *
 * <p>{@link GoRuntime#start} refuses a JVM without the options unless the system property
 * {@value #ALLOW_STALE_CURRENT_THREAD}{@code =true} is set, which gives up a correct {@code
 * Thread.currentThread()} in goroutine code and with it every ThreadLocal, ReentrantLock,
 * ThreadLocalRandom and JDK lock used there. Every launcher of the project passes the options
 * ({@code scripts/run.sh}, the Dockerfile's {@code JDK_JAVA_OPTIONS}, the tests' argLine, the
 * benchmark peers); an application's {@code main} that must work under a plain {@code java -jar}
 * calls {@link #relaunchIfNeeded} first, which re-executes the process in place with them.
 */
public final class SafeJvm {

    /** The JVM options that make {@code Thread.currentThread()} a fresh read in compiled code. */
    public static final List<String> OPTIONS = List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread");

    /**
     * The system property that lets {@link GoRuntime#start} run on a JVM without {@link #OPTIONS},
     * giving up a correct {@code Thread.currentThread()} (ThreadLocals, ReentrantLocks, the JDK's
     * locks) in goroutine code.
     */
    public static final String ALLOW_STALE_CURRENT_THREAD = "gosched.allowStaleCurrentThread";

    /** Set in the environment of a JVM re-executed by {@link #relaunchIfNeeded}: it never re-executes again. */
    static final String RELAUNCHED_ENV = "GOSCHED_RELAUNCHED";

    private static volatile Boolean safe;

    private SafeJvm() {
    }

    /**
     * Whether compiled code in this JVM reads {@code Thread.currentThread()} afresh: the
     * {@code _currentThread} intrinsic is disabled ({@code -XX:DisableIntrinsic=_currentThread}
     * or {@code -XX:ControlIntrinsic=-_currentThread}) or the JVM interprets only ({@code -Xint}).
     */
    public static boolean isSafe() {
        Boolean s = safe;
        if (s == null) {
            s = detect();
            safe = s;
        }
        return s;
    }

    private static boolean detect() {
        if (String.valueOf(System.getProperty("java.vm.info")).contains("interpreted mode")) {
            return true; // -Xint: no compiler to cache anything
        }
        try {
            var diag = java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            if (diag != null) {
                return hasToken(vmOption(diag, "DisableIntrinsic"), "_currentThread")
                        || hasToken(vmOption(diag, "ControlIntrinsic"), "-_currentThread");
            }
        } catch (LinkageError | RuntimeException e) {
            // no jdk.management in this image: read the command line instead
        }
        try {
            List<String> args = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments();
            for (String a : args) {
                if (a.startsWith("-XX:DisableIntrinsic=") && hasToken(a.substring(a.indexOf('=') + 1), "_currentThread")
                        || a.startsWith("-XX:ControlIntrinsic=") && hasToken(a.substring(a.indexOf('=') + 1), "-_currentThread")) {
                    return true;
                }
            }
        } catch (LinkageError | RuntimeException e) {
            // no java.management either: we cannot tell, so we do not claim safety
        }
        return false;
    }

    private static String vmOption(com.sun.management.HotSpotDiagnosticMXBean diag, String name) {
        try {
            return diag.getVMOption(name).getValue();
        } catch (IllegalArgumentException e) {
            return ""; // a diagnostic option is invisible while it is locked, i.e. not set
        }
    }

    /** Whether the comma- or space-separated list holds token. */
    static boolean hasToken(String list, String token) {
        return list != null && Arrays.stream(list.split("[,\\s]+")).anyMatch(token::equals);
    }

    /**
     * Called by {@link GoRuntime#start}: fails with a message naming {@link #OPTIONS} on an
     * unsafe JVM, unless {@value #ALLOW_STALE_CURRENT_THREAD} is set.
     */
    static void check() {
        if (isSafe() || Boolean.getBoolean(ALLOW_STALE_CURRENT_THREAD)) {
            return;
        }
        throw new IllegalStateException(
                "gosched: this JVM lets compiled code keep Thread.currentThread() across a goroutine's move to another "
                        + "thread, which breaks ReentrantLock, ThreadLocal, ThreadLocalRandom and the JDK's own locks in "
                        + "goroutine code. Start the JVM with " + String.join(" ", OPTIONS)
                        + " (for example JDK_JAVA_OPTIONS=\"" + String.join(" ", OPTIONS) + "\"), "
                        + "or call SafeJvm.relaunchIfNeeded(args) first in main; or give up a correct "
                        + "Thread.currentThread() in goroutines with -D" + ALLOW_STALE_CURRENT_THREAD + "=true.");
    }

    /**
     * Makes {@code java -jar app.jar} need no flag typed by its user: on a JVM without {@link
     * #OPTIONS}, replaces this process by the same command line with them ({@code execve(2)}
     * through the Foreign Function and Memory API, the JVM's Unix launchers' own way of re-running
     * themselves): the pid, the parent, standard input and output, the working directory and the
     * environment stay; nothing of this JVM survives; no second process ever exists, so a signal
     * to the pid the user started (a supervisor's SIGTERM, a SIGKILL) reaches the JVM that
     * serves. On a safe JVM, or when {@value #ALLOW_STALE_CURRENT_THREAD} is set, it returns at
     * once. Call it first in {@code main}, before any thread is started or file opened that
     * should not be lost: this process's image ends on success. When the command line cannot be
     * read, on a system without this in-place exec (other than Linux), or when the exec fails,
     * it prints why and returns, and {@link GoRuntime#start} reports the options to use.
     *
     * <p>The downcall is a restricted method: an application jar that calls this carries {@code
     * Enable-Native-Access: ALL-UNNAMED} in its manifest, or the JDK prints a warning before the
     * exec (a warning, not a failure, under the JDK's default {@code --illegal-native-access=warn}).
     *
     * @param args main's arguments (the command line is read from the process itself, which
     *     also carries the JVM options and the jar or main class)
     */
    public static void relaunchIfNeeded(String[] args) {
        if (isSafe() || Boolean.getBoolean(ALLOW_STALE_CURRENT_THREAD) || System.getenv(RELAUNCHED_ENV) != null) {
            return;
        }
        Optional<List<String>> command = relaunchCommand();
        if (command.isEmpty()) {
            System.err.println("gosched: cannot read this JVM's command line to re-execute it with " + String.join(" ", OPTIONS));
            return;
        }
        Map<String, String> env = new LinkedHashMap<>(System.getenv());
        env.put(RELAUNCHED_ENV, "1"); // a JVM that is somehow still unsafe must not exec itself for ever
        String why = InPlaceExec.exec(command.get(), env);
        System.err.println("gosched: could not re-execute the JVM with " + String.join(" ", OPTIONS) + ": " + why);
    }

    /** This process's command line with {@link #OPTIONS} after the executable, or empty if unreadable. */
    static Optional<List<String>> relaunchCommand() {
        ProcessHandle.Info info = ProcessHandle.current().info();
        Optional<String> exe = info.command();
        Optional<String[]> argv = info.arguments();
        if (exe.isEmpty() || argv.isEmpty()) {
            return Optional.empty();
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(exe.get());
        cmd.addAll(OPTIONS);
        cmd.addAll(Arrays.asList(argv.get()));
        return Optional.of(cmd);
    }
}
