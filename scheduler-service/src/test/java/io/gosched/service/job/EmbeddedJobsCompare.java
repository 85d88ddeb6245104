package io.gosched.service.job;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Two (or more) builds of the embedded job service in one JVM, a class loader each, their
 * {@link EmbeddedJobsHarness} rounds alternated (the order flips every round): on a shared,
 * noisy machine both see the same noise, so their ratio means something where two JVMs run one
 * after the other do not. Not a test; {@code bench/embedded-jobs.sh} builds a git revision and
 * runs this against the working tree.
 *
 * <pre>
 *   java ... io.gosched.service.job.EmbeddedJobsCompare before=&lt;classpath&gt; after=&lt;classpath&gt;
 *        -Djobs=one-step -Dhow=flood,paced -Druns=100000 -Drounds=7 -Dwarmup=2
 * </pre>
 * Each classpath holds a build's scheduler-service classes and test classes, its scheduler-core
 * classes and the dependencies. Ratios are against the first build.
 */
public final class EmbeddedJobsCompare {

    private EmbeddedJobsCompare() {}

    public static void main(String[] args) throws Exception {
        List<String> labels = new ArrayList<>();
        List<Method> builds = new ArrayList<>();
        List<ClassLoader> loaders = new ArrayList<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("expected label=classpath, got " + a);
            }
            List<URL> urls = new ArrayList<>();
            for (String p : a.substring(eq + 1).split(File.pathSeparator)) {
                if (!p.isEmpty()) {
                    urls.add(new File(p).toURI().toURL());
                }
            }
            ClassLoader l = new URLClassLoader(a.substring(0, eq), urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
            labels.add(a.substring(0, eq));
            loaders.add(l);
            builds.add(l.loadClass(EmbeddedJobsHarness.class.getName()).getMethod("measureOnce", String.class, String.class, int.class));
        }
        int runs = Integer.getInteger("runs", 100_000);
        int rounds = Integer.getInteger("rounds", 7);
        int warmup = Integer.getInteger("warmup", 2);
        for (String job : System.getProperty("jobs", "one-step").split(",")) {
            for (String how : System.getProperty("how", "flood,paced").split(",")) {
                int n = builds.size();
                double[][] submits = new double[n][rounds];
                double[][] completes = new double[n][rounds];
                double[][] cpu = new double[n][rounds];
                for (int r = -warmup; r < rounds; r++) {
                    for (int k = 0; k < n; k++) {
                        int b = (r & 1) == 0 ? k : n - 1 - k; // alternate who goes first
                        double[] t = measure(builds.get(b), loaders.get(b), job, how, runs);
                        if (r >= 0) {
                            submits[b][r] = t[0];
                            completes[b][r] = t[1];
                            cpu[b][r] = t.length > 2 ? t[2] : Double.NaN;
                        }
                    }
                }
                for (int b = 0; b < n; b++) {
                    System.out.printf("%-10s %-6s %-10s completions/s median %7.0f  submissions/s median %7.0f  CPU us/job median %6.1f"
                            + "  all completions %s%n", job, how, labels.get(b), median(completes[b]), median(submits[b]), median(cpu[b]),
                            Arrays.toString(round(completes[b])));
                }
                for (int b = 1; b < n; b++) {
                    double[] ratios = new double[rounds];
                    for (int r = 0; r < rounds; r++) {
                        ratios[r] = completes[b][r] / completes[0][r];
                    }
                    System.out.printf("%-10s %-6s %s / %s completions/s: ratio of medians %.2f, median of per-round ratios %.2f,"
                            + " per round %s; CPU per job: ratio of medians %.2f%n", job, how, labels.get(b), labels.get(0),
                            median(completes[b]) / median(completes[0]), median(ratios),
                            Arrays.toString(Arrays.stream(ratios).map(x -> Math.round(x * 100) / 100.0).toArray()),
                            median(cpu[b]) / median(cpu[0]));
                }
            }
        }
        System.exit(0);
    }

    private static double[] measure(Method m, ClassLoader l, String job, String how, int runs) throws Exception {
        Thread t = Thread.currentThread();
        ClassLoader before = t.getContextClassLoader();
        t.setContextClassLoader(l);
        try {
            return (double[]) m.invoke(null, job, how, runs);
        } finally {
            t.setContextClassLoader(before);
            System.gc(); // the finished service's garbage is not the next round's cost
        }
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static long[] round(double[] xs) {
        return Arrays.stream(xs).mapToLong(Math::round).toArray();
    }
}
