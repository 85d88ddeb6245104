package io.gosched.agent;

import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Preemption without safe points, opt-in: a Java agent that inserts the runtime's preemption
 * check ({@code io.gosched.runtime.SafePoint.poll()}) at every method entry and loop back-edge
 * of the classes a user names, so that a goroutine in a tight loop yields at the runtime's
 * quantum (10 ms by default), as Go 1.14+ preempts one, instead of keeping its M until sysmon
 * lends its P's work a spare P.
 *
 * <pre>
 *   java -javaagent:scheduler-agent.jar=com.example.work,org.acme.Solver -cp ... Main
 * </pre>
 *
 * <p>The argument is a comma-separated list of package or class prefixes: {@code com.example}
 * names the classes of {@code com.example} and its subpackages, {@code org.acme.Solver} that
 * class and its nested classes. Classes are instrumented as they load; classes loaded before the
 * agent (JDK classes) are never touched, and neither are the JDK's packages nor the runtime's
 * own ({@code io.gosched.runtime} and the packages built on it), which a prefix may not name.
 * Only classes whose class loader can see the runtime are changed.
 *
 * <p>What is left out, and why (details in docs/runtime.md): static initializers (they run
 * under the class's init lock, where a yield cannot unmount anyway), {@code synchronized}
 * methods, and the back-edges of methods that use {@code synchronized} blocks. A goroutine that
 * yields holding a monitor keeps it while it waits for a P, and another goroutine blocking on
 * that monitor blocks its M, not just itself; with one P that is a deadlock the uninstrumented
 * code never had. Instrumented code called while its caller holds a monitor or a
 * {@code java.util.concurrent} lock can still yield there: do not name packages whose code runs
 * under locks taken elsewhere.
 *
 * <p>Cost: one volatile load and a not-taken branch per back-edge and call while no goroutine is
 * asked to yield (measured in docs/runtime.md); at start, some 40 ms of CPU to warm the JDK's
 * class-file API, which the first class loaded by a goroutine would otherwise pay where it
 * cannot yield (PreemptTransformer.warmUp). System property {@code gosched.agent.verbose=true}
 * logs the warm-up and every class changed.
 */
public final class PreemptAgent {

    /**
     * Packages a prefix may neither name, cover nor lie inside: the JDK's (its classes are
     * shared by the runtime itself) and the runtime's (SafePoint.poll would call itself, and the
     * runtime holds its own spin locks where a yield would deadlock).
     */
    static final List<String> FORBIDDEN = List.of(
            "java", "javax", "jdk", "sun", "com.sun",
            "io.gosched.runtime", "io.gosched.sync", "io.gosched.time", "io.gosched.context", "io.gosched.net");

    private static final Pattern QUALIFIED_NAME =
            Pattern.compile("\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*(\\.\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*)*");

    private static volatile PreemptTransformer installed;

    private PreemptAgent() {
    }

    /** Called by the JVM for {@code -javaagent:}; args is the text after {@code =}. */
    public static void premain(String args, Instrumentation inst) {
        List<String> prefixes = parse(args);
        boolean verbose = Boolean.getBoolean("gosched.agent.verbose");
        PreemptTransformer t = new PreemptTransformer(prefixes, inst, verbose);
        long t0 = System.nanoTime();
        int checks = PreemptTransformer.warmUp();
        if (verbose) {
            System.err.printf("gosched agent: warmed up in %.1f ms (%d checks in a class file of its own, not defined)%n",
                    (System.nanoTime() - t0) / 1e6, checks);
        }
        inst.addTransformer(t, false);
        installed = t;
    }

    /**
     * The agent's argument as package or class prefixes.
     *
     * @throws IllegalArgumentException naming what is wrong: no prefix, a malformed one, or one
     *     that names, covers or lies inside a forbidden package
     */
    static List<String> parse(String args) {
        String usage = "; usage: -javaagent:scheduler-agent.jar=com.example.pkg[,org.example.Cls...]";
        if (args == null || args.isBlank()) {
            throw new IllegalArgumentException("gosched agent: no package or class prefixes given" + usage);
        }
        List<String> out = new ArrayList<>();
        for (String raw : args.split(",", -1)) {
            String p = raw.strip();
            if (p.isEmpty()) {
                throw new IllegalArgumentException("gosched agent: empty prefix in \"" + args + "\"" + usage);
            }
            if (!QUALIFIED_NAME.matcher(p).matches()) {
                throw new IllegalArgumentException("gosched agent: \"" + p + "\" is not a package or class name" + usage);
            }
            for (String f : FORBIDDEN) {
                if (p.equals(f) || f.startsWith(p + ".") || p.startsWith(f + ".")) {
                    throw new IllegalArgumentException("gosched agent: \"" + p + "\" would instrument " + f
                            + ", which is never instrumented (the JDK and the gosched runtime: " + FORBIDDEN + ")");
                }
            }
            out.add(p);
        }
        return List.copyOf(out);
    }

    /** Whether the agent was attached to this JVM. */
    public static boolean installed() {
        return installed != null;
    }

    /** The classes changed so far, by binary name ({@code com.example.Outer$Inner}); empty when not attached. */
    public static Set<String> instrumentedClasses() {
        PreemptTransformer t = installed;
        return t == null ? Set.of() : Collections.unmodifiableSet(t.instrumented());
    }
}
