package io.gosched.agent;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeModel;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.Label;
import java.lang.classfile.MethodModel;
import java.lang.classfile.MethodTransform;
import java.lang.classfile.instruction.BranchInstruction;
import java.lang.classfile.instruction.LabelTarget;
import java.lang.classfile.instruction.LookupSwitchInstruction;
import java.lang.classfile.instruction.MonitorInstruction;
import java.lang.classfile.instruction.TableSwitchInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.MethodTypeDesc;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.AccessFlag;
import java.security.ProtectionDomain;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Inserts {@code invokestatic io/gosched/runtime/SafePoint.poll()V} at the entry of every
 * method and before every backward branch (a loop's back-edge) of the named classes, with the
 * JDK's {@code java.lang.classfile} API. The call is stack-neutral (no arguments, no result), so
 * the methods' locals, stack and frames are unchanged; the stack maps are regenerated around the
 * longer code. See {@link PreemptAgent} for what is left out and why.
 */
final class PreemptTransformer implements ClassFileTransformer {

    static final String SAFEPOINT = "io.gosched.runtime.SafePoint";
    static final ClassDesc CD_SAFEPOINT = ClassDesc.of(SAFEPOINT);
    static final String POLL = "poll";
    static final MethodTypeDesc MTD_POLL = MethodTypeDesc.of(ConstantDescs.CD_void);
    private static final String SAFEPOINT_RESOURCE = SAFEPOINT.replace('.', '/') + ".class";

    /** Internal-form prefixes ({@code com/example}). */
    private final List<String> prefixes;
    private final Instrumentation inst;
    private final boolean verbose;
    private final Set<String> instrumented = ConcurrentHashMap.newKeySet();
    /** Whether a class loader can see SafePoint; guarded by itself. */
    private final Map<ClassLoader, Boolean> sees = new WeakHashMap<>();
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    PreemptTransformer(List<String> prefixes, Instrumentation inst, boolean verbose) {
        this.prefixes = prefixes.stream().map(p -> p.replace('.', '/')).toList();
        this.inst = inst;
        this.verbose = verbose;
    }

    Set<String> instrumented() {
        return instrumented;
    }

    /** Whether internal name (com/example/Foo$1) is one of the named classes. */
    boolean matches(String internalName) {
        for (String p : prefixes) {
            if (internalName.startsWith(p) && (internalName.length() == p.length()
                    || internalName.charAt(p.length()) == '/' || internalName.charAt(p.length()) == '$')) {
                return !forbidden(internalName);
            }
        }
        return false;
    }

    private static boolean forbidden(String internalName) {
        for (String f : PreemptAgent.FORBIDDEN) {
            if (internalName.startsWith(f.replace('.', '/') + "/")) {
                return true;
            }
        }
        // The agent's own classes (but not packages below it, where its tests live).
        return internalName.startsWith("io/gosched/agent/") && internalName.indexOf('/', "io/gosched/agent/".length()) < 0;
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String className, Class<?> classBeingRedefined,
            ProtectionDomain protectionDomain, byte[] classfileBuffer) {
        if (className == null || classBeingRedefined != null || loader == null || !matches(className)) {
            return null;
        }
        try {
            if (!seesSafePoint(loader)) {
                warnOnce(loader.toString(), "gosched agent: left classes of " + loader
                        + " uninstrumented: it cannot see " + SAFEPOINT + " (put scheduler-core on its class path)");
                return null;
            }
            if (module != null && module.isNamed() && !readsSafePoint(module, loader)) {
                return null;
            }
            Result r = instrument(classfileBuffer, loader);
            if (r.polls() == 0) {
                return null;
            }
            String name = className.replace('/', '.');
            instrumented.add(name);
            if (verbose) {
                System.err.println("gosched agent: " + name + ": " + r.polls() + " preemption checks");
            }
            return r.bytes();
        } catch (Throwable t) {
            // Never break class loading: the class simply keeps its original code.
            warnOnce(className, "gosched agent: left " + className.replace('/', '.') + " uninstrumented: " + t);
            return null;
        }
    }

    /**
     * Instruments the transformer's own class file once and throws the result away, so that the
     * first class the agent changes does not pay for the JDK's class-file API running cold.
     *
     * <p>Whichever thread loads a named class runs this transformer inside {@code defineClass},
     * under a native frame, where a goroutine cannot yield. The first class a JVM builds with the
     * class-file API cost 39–47 ms of CPU (78–103 ms of wall time) on the 2-core CI VM, after
     * this warm-up 6–9 ms. A goroutine that happened to load the first named class held its P
     * for several quanta, and sysmon lent the P's work a spare (PreemptAgentIT saw it, with the
     * goroutine's stack in the class-file API). Called from premain, before any goroutine
     * exists, so the JVM's start pays it instead.
     *
     * @return the checks it inserted, or 0 if the class file could not be read (the first load
     *     is then only slower, which is no reason to fail the agent)
     */
    static int warmUp() {
        try (InputStream in = PreemptTransformer.class.getResourceAsStream("PreemptTransformer.class")) {
            return in == null ? 0 : instrument(in.readAllBytes(), PreemptTransformer.class.getClassLoader()).polls();
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** The instrumented class and how many checks were inserted. */
    record Result(byte[] bytes, int polls) {}

    /**
     * Instruments one class file. loader resolves the class hierarchy the stack-map generator
     * asks about (by reading class files as resources, never by loading classes).
     */
    static Result instrument(byte[] classfile, ClassLoader loader) {
        ClassHierarchyResolver resolver = ClassHierarchyResolver.defaultResolver();
        if (loader != null) {
            resolver = ClassHierarchyResolver.ofResourceParsing(loader).orElse(resolver);
        }
        ClassFile cf = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(resolver));
        ClassModel cm = cf.parse(classfile);
        int[] polls = {0};
        ClassTransform t = (clb, ce) -> {
            if (ce instanceof MethodModel mm && instrumentable(mm)) {
                CodeModel code = mm.code().orElseThrow();
                boolean backEdges = code.elementStream().noneMatch(e -> e instanceof MonitorInstruction);
                clb.transformMethod(mm, MethodTransform.transformingCode(new PollInserter(backEdges, polls)));
            } else {
                clb.with(ce);
            }
        };
        byte[] out = cf.transformClass(cm, t);
        return new Result(out, polls[0]);
    }

    /** Methods with code, other than static initializers and synchronized methods. */
    static boolean instrumentable(MethodModel mm) {
        return mm.code().isPresent()
                && !mm.methodName().equalsString(ConstantDescs.CLASS_INIT_NAME)
                && !mm.flags().has(AccessFlag.SYNCHRONIZED);
    }

    /**
     * Per method: a check at entry, and one before each branch to a label already bound (a
     * backward branch, i.e. a loop's back-edge, in the order the code is laid out). A method
     * with {@code synchronized} blocks gets only the entry check (see PreemptAgent).
     */
    static final class PollInserter implements CodeTransform {
        private final boolean backEdges;
        private final int[] polls;
        private final Set<Label> bound = new HashSet<>();

        PollInserter(boolean backEdges, int[] polls) {
            this.backEdges = backEdges;
            this.polls = polls;
        }

        @Override
        public void atStart(CodeBuilder b) {
            poll(b);
        }

        @Override
        public void accept(CodeBuilder b, CodeElement e) {
            if (e instanceof LabelTarget lt) {
                bound.add(lt.label());
            } else if (backEdges && isBackEdge(e)) {
                poll(b);
            }
            b.with(e);
        }

        private boolean isBackEdge(CodeElement e) {
            return switch (e) {
                case BranchInstruction br -> bound.contains(br.target());
                case TableSwitchInstruction ts -> bound.contains(ts.defaultTarget())
                        || ts.cases().stream().anyMatch(c -> bound.contains(c.target()));
                case LookupSwitchInstruction ls -> bound.contains(ls.defaultTarget())
                        || ls.cases().stream().anyMatch(c -> bound.contains(c.target()));
                default -> false;
            };
        }

        private void poll(CodeBuilder b) {
            b.invokestatic(CD_SAFEPOINT, POLL, MTD_POLL);
            polls[0]++;
        }
    }

    private boolean seesSafePoint(ClassLoader loader) {
        synchronized (sees) {
            return sees.computeIfAbsent(loader, l -> l.getResource(SAFEPOINT_RESOURCE) != null);
        }
    }

    /**
     * A class of a named module calls SafePoint only if its module reads SafePoint's: add that
     * edge (as the module system lets an agent do). False, with a warning, if that fails.
     */
    private boolean readsSafePoint(Module module, ClassLoader loader) {
        try {
            Module target = Class.forName(SAFEPOINT, false, loader).getModule();
            if (!module.canRead(target)) {
                inst.redefineModule(module, Set.of(target), Map.of(), Map.of(), Set.of(), Map.of());
            }
            return true;
        } catch (Throwable t) {
            warnOnce(module.getName(), "gosched agent: left module " + module.getName() + " uninstrumented: " + t);
            return false;
        }
    }

    private void warnOnce(String key, String message) {
        if (warned.add(key)) {
            System.err.println(message);
        }
    }
}
