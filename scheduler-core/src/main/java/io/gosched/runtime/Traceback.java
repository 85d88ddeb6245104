package io.gosched.runtime;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Goroutine stacks and Go's traceback text: the frames of a parked goroutine (walked on its
 * unmounted continuation), the frame of a {@code go} call, and the dump format of
 * {@code runtime.Stack(all)} / {@code debug=2}.
 *
 * Go: runtime/traceback.go (goroutineheader, traceback, printcreatedby, showframe)
 */
final class Traceback {

    private Traceback() {
    }

    // =============================================================================================
    // createdAt: the frame of the go call
    // =============================================================================================

    /*
     * Go records gp.gopc, one word, at every go statement. The JVM's only way to the caller's frame
     * is a stack walk, about a microsecond: several times the cost of the whole spawn. So the
     * frame is cached per body class where the class names one place in the source: a lambda, an
     * anonymous or a local class is written once, and is almost always handed to go() at that one
     * place (a lambda stored in a variable and started from two go calls shows the first). Any
     * other Runnable class is walked for at every go call until SAME_SITE_CHECKS walks in a row
     * found one frame; then that frame is kept too (a named class started from one place only is
     * the common case; one started from several places keeps paying the walk). Cost measured by
     * SpawnCreationSiteBenchmark (see docs/debugging.md).
     */
    static final int SAME_SITE_CHECKS = 64;

    private static final ClassValue<CreationSite> SITES = new ClassValue<>() {
        @Override
        protected CreationSite computeValue(Class<?> type) {
            return new CreationSite(type.isHidden() || type.isAnonymousClass() || type.isLocalClass());
        }
    };

    private static final class CreationSite {
        final boolean singleSite;
        volatile StackTraceElement frame;
        /** For other classes: the frame seen last and how many walks in a row found it (racy: a hint). */
        StackTraceElement last;
        int sameInARow;

        CreationSite(boolean singleSite) {
            this.singleSite = singleSite;
        }
    }

    /** The runtime's own classes: a go call's frame is the first frame outside them. */
    private static final Set<Class<?>> GO_CALLERS = Set.of(Go.class, GoRuntime.class, Scheduler.class, Traceback.class);

    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

    /** The frame that called go (or GoRuntime.go / run) to start body. Can be executed by any thread. */
    static StackTraceElement creationFrame(Runnable body) {
        CreationSite site = SITES.get(body.getClass());
        StackTraceElement f = site.frame;
        if (f != null) {
            return f;
        }
        f = WALKER.walk(s -> s.filter(fr -> !GO_CALLERS.contains(fr.getDeclaringClass()))
                .findFirst().map(StackWalker.StackFrame::toStackTraceElement).orElse(null));
        if (site.singleSite) {
            site.frame = f;
        } else if (f != null) {
            if (f.equals(site.last)) {
                if (++site.sameInARow >= SAME_SITE_CHECKS) {
                    site.frame = f;
                }
            } else {
                site.last = f;
                site.sameInARow = 0;
            }
        }
        return f;
    }

    // =============================================================================================
    // A goroutine's own frames
    // =============================================================================================

    /**
     * The frames of gp's unmounted continuation, innermost first, from the first frame above the
     * continuation machinery (jdk.internal.vm) down to the goroutine's body (G.run and the frames
     * that enter the continuation are cut). The caller holds gp in a SCAN status, so nothing
     * mounts it meanwhile. Empty for a coroutine that has not started.
     */
    static List<StackTraceElement> stackOf(G gp) {
        Coroutine c = gp.coroutine;
        if (c == null) {
            return List.of();
        }
        StackTraceElement[] all;
        try {
            all = c.stackWalker(EnumSet.of(StackWalker.Option.SHOW_REFLECT_FRAMES))
                    .walk(s -> s.map(StackWalker.StackFrame::toStackTraceElement).toArray(StackTraceElement[]::new));
        } catch (IllegalStateException e) {
            return List.of(); // mounted after all (cannot happen under SCAN); report no frames, not a failure
        }
        int from = 0;
        while (from < all.length && all[from].getClassName().startsWith("jdk.internal.vm.")) {
            from++;
        }
        int to = from;
        while (to < all.length && !(all[to].getClassName().equals(G.class.getName()) && all[to].getMethodName().equals("run"))) {
            to++;
        }
        return Arrays.asList(Arrays.copyOfRange(all, from, to));
    }

    /**
     * The frames of gp, locked to its M and not running: they are on that M's thread, which
     * waits inside them (stoplockedm) instead of unmounting the continuation. Innermost first,
     * from the first runtime frame (the thread's own park frames above it are cut) down to the
     * goroutine's body, as {@link #stackOf}. The caller holds gp in a SCAN status, so the M,
     * even if woken, does not return into gp's frames meanwhile. Empty if gp is no longer locked.
     * Go: runtime/traceback.go traceback of a g whose m is locked (goroutineheader adds "locked to thread")
     */
    static List<StackTraceElement> stackOfLocked(G gp) {
        M mp = gp.lockedm;
        if (mp == null) {
            return List.of();
        }
        StackTraceElement[] all = mp.getStackTrace();
        int from = 0;
        while (from < all.length && !all[from].getClassName().startsWith("io.gosched.runtime.")) {
            from++;
        }
        int to = from;
        while (to < all.length && !(all[to].getClassName().equals(G.class.getName()) && all[to].getMethodName().equals("run"))) {
            to++;
        }
        if (to == all.length) {
            return List.of(); // not inside gp's frames after all
        }
        return Arrays.asList(Arrays.copyOfRange(all, from, to));
    }

    // =============================================================================================
    // The text
    // =============================================================================================

    /**
     * The runtime's own classes, whose frames the text hides as Go's default traceback level hides
     * runtime.* frames (GoroutineInfo.stack keeps them: GOTRACEBACK=system). The public entry
     * points (Chan.recv, Select.select, Go.sleep, ...) are hidden too, as Go hides chanrecv1.
     */
    private static final Set<String> RUNTIME_CLASSES = Set.of("G", "Go", "GoRuntime", "Scheduler", "Coroutine",
            "Chan", "Select", "Sema", "Sudog", "Timers", "RuntimeTimer", "Netpoll", "PollDesc", "ParkCommit",
            "SafePoint", "M", "P", "Traceback");

    /** Whether Go's default traceback would show this frame. Go: runtime/traceback.go showframe */
    static boolean showFrame(StackTraceElement f) {
        String cn = f.getClassName();
        if (cn.startsWith("jdk.internal.vm.")) {
            return false;
        }
        if (!cn.startsWith("io.gosched.runtime.")) {
            return true;
        }
        String simple = cn.substring("io.gosched.runtime.".length());
        int dollar = simple.indexOf('$');
        return !RUNTIME_CLASSES.contains(dollar < 0 ? simple : simple.substring(0, dollar));
    }

    /** Go's dump of every goroutine in infos, blank-line separated. */
    static String dump(List<GoroutineInfo> infos) {
        StringBuilder sb = new StringBuilder(infos.size() * 256);
        for (int i = 0; i < infos.size(); i++) {
            if (i > 0) {
                sb.append('\n');
            }
            appendGoroutine(sb, infos.get(i));
        }
        return sb.toString();
    }

    /**
     * One goroutine as Go prints it:
     * <pre>
     * goroutine 7 [chan receive, 2 minutes labels:{"job":"42"}]:
     * com.example.Worker.lambda$start$0(...)
     * 	Worker.java:31
     * created by com.example.Worker.start in goroutine 1
     * 	Worker.java:30
     * </pre>
     * Go: runtime/traceback.go goroutineheader, traceback1, printcreatedby1; the labels as Go 1.26's
     * GODEBUG=tracebacklabels=1 puts them in the header
     */
    static void appendGoroutine(StringBuilder sb, GoroutineInfo g) {
        sb.append("goroutine ").append(g.id()).append(" [");
        sb.append(g.is(GoroutineInfo.State.WAITING) && !g.waitReason().isEmpty() ? g.waitReason() : g.state());
        long minutes = g.waitingFor().toMinutes();
        if (minutes >= 1) {
            sb.append(", ").append(minutes).append(" minutes"); // Go: waitfor >= 1 only, and always "minutes"
        }
        if (!g.labels().isEmpty()) {
            sb.append(" labels:").append(labelsString(g.labels()));
        }
        sb.append("]:\n");
        boolean any = false;
        for (StackTraceElement f : g.stack()) {
            if (showFrame(f)) {
                appendFrame(sb, f);
                any = true;
            }
        }
        if (!any) {
            if (g.is(GoroutineInfo.State.RUNNING) || g.is(GoroutineInfo.State.SYSCALL)) {
                sb.append("\tgoroutine running on other thread; stack unavailable\n"); // Go's words
            } else if (!g.stack().isEmpty()) {
                sb.append("\t(only runtime frames; see GoroutineInfo.stack)\n");
            }
        }
        StackTraceElement c = g.createdAt();
        if (c != null) {
            sb.append("created by ").append(c.getClassName()).append('.').append(c.getMethodName());
            if (g.parentId() != 0) {
                sb.append(" in goroutine ").append(g.parentId());
            }
            sb.append("\n\t").append(location(c)).append('\n');
        }
    }

    private static void appendFrame(StringBuilder sb, StackTraceElement f) {
        sb.append(f.getClassName()).append('.').append(f.getMethodName()).append("(...)\n\t").append(location(f)).append('\n');
    }

    private static String location(StackTraceElement f) {
        String file = f.getFileName() != null ? f.getFileName() : "?";
        return f.getLineNumber() >= 0 ? file + ":" + f.getLineNumber() : file;
    }

    /**
     * A label map as pprof's LabelSet String prints it: sorted by key, quoted, {@code {"k":"v", "k2":"v2"}}.
     * Characters outside printable ASCII are escaped, so a label cannot forge dump lines.
     * Go: runtime/pprof/label.go labelMap.String
     */
    static String labelsString(Map<String, String> labels) {
        List<String> keys = new ArrayList<>(labels.keySet());
        keys.sort(null);
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < keys.size(); i++) {
            if (i > 0) {
                sb.append(", ");
            }
            quote(sb, keys.get(i));
            sb.append(':');
            quote(sb, labels.get(keys.get(i)));
        }
        return sb.append('}').toString();
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"' || ch == '\\') {
                sb.append('\\').append(ch);
            } else if (ch >= 0x20 && ch < 0x7f) {
                sb.append(ch);
            } else if (ch == '\n') {
                sb.append("\\n");
            } else if (ch == '\t') {
                sb.append("\\t");
            } else {
                sb.append(String.format("\\u%04x", (int) ch));
            }
        }
        sb.append('"');
    }
}
