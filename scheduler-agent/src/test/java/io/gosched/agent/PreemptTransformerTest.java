package io.gosched.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.agent.samples.Loops;
import io.gosched.runtime.SafePoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeElement;
import java.lang.classfile.MethodModel;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The transformer on class bytes, without the agent attached: where the checks go, and that the code still verifies and computes the same. */
class PreemptTransformerTest {

    static byte[] classBytes(String binaryName) {
        try (InputStream in = PreemptTransformerTest.class.getClassLoader()
                .getResourceAsStream(binaryName.replace('.', '/') + ".class")) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Per method (name + descriptor): the number of SafePoint.poll calls, and whether the first instruction is one. */
    record Checks(int polls, boolean atEntry) {}

    static Map<String, Checks> checks(byte[] bytes) {
        ClassModel cm = ClassFile.of().parse(bytes);
        Map<String, Checks> out = new LinkedHashMap<>();
        for (MethodModel mm : cm.methods()) {
            if (mm.code().isEmpty()) {
                continue;
            }
            List<CodeElement> code = mm.code().get().elementList().stream()
                    .filter(e -> e instanceof java.lang.classfile.Instruction).toList();
            int polls = 0;
            for (CodeElement e : code) {
                if (isPoll(e)) {
                    polls++;
                }
            }
            out.put(mm.methodName().stringValue() + mm.methodType().stringValue(), new Checks(polls, !code.isEmpty() && isPoll(code.get(0))));
        }
        return out;
    }

    static boolean isPoll(CodeElement e) {
        return e instanceof InvokeInstruction inv
                && inv.owner().asInternalName().equals("io/gosched/runtime/SafePoint")
                && inv.name().equalsString("poll") && inv.type().equalsString("()V");
    }

    @Test
    void theHookTheAgentCallsExists() throws Exception {
        Method poll = SafePoint.class.getMethod(PreemptTransformer.POLL);
        assertThat(Modifier.isStatic(poll.getModifiers())).isTrue();
        assertThat(poll.getReturnType()).isEqualTo(void.class);
        assertThat(SafePoint.class.getName()).isEqualTo(PreemptTransformer.SAFEPOINT);
    }

    @Test
    void checksGoAtEntriesAndBackEdgesOnly() {
        byte[] original = classBytes(Loops.class.getName());
        assertThat(checks(original).values()).as("the original has none").allMatch(c -> c.polls() == 0);
        PreemptTransformer.Result r = PreemptTransformer.instrument(original, getClass().getClassLoader());
        Map<String, Checks> got = checks(r.bytes());

        assertThat(got.get("sumTo(I)J")).isEqualTo(new Checks(2, true));
        assertThat(got.get("nested(I)J")).isEqualTo(new Checks(3, true));
        assertThat(got.get("doWhile(I)I")).isEqualTo(new Checks(2, true));
        assertThat(got.get("switchInLoop(I)I")).isEqualTo(new Checks(2, true));
        assertThat(got.get("fib(I)J")).isEqualTo(new Checks(1, true));
        assertThat(got.get("exceptionsInLoop(I)I")).isEqualTo(new Checks(2, true));
        assertThat(got.get("wide(I)D")).isEqualTo(new Checks(2, true));
        assertThat(got.get("lambda(I)I")).isEqualTo(new Checks(1, true));
        assertThat(got.get("breakOut(I)I")).isEqualTo(new Checks(2, true));
        assertThat(got.get("<init>(J)V")).as("constructor: entry (before super(), which is legal) + loop").isEqualTo(new Checks(2, true));
        assertThat(got.entrySet()).as("the lambda body").anyMatch(e -> e.getKey().startsWith("lambda$lambda$")
                && e.getValue().equals(new Checks(2, true)));
        assertThat(got.get("synchronizedLoop(I)J")).as("synchronized method").isEqualTo(new Checks(0, false));
        assertThat(got.get("synchronizedBlock(I)J")).as("synchronized block: entry only").isEqualTo(new Checks(1, true));
        assertThat(got.get("<clinit>()V")).as("static initializer").isEqualTo(new Checks(0, false));
        assertThat(r.polls()).isEqualTo(got.values().stream().mapToInt(Checks::polls).sum());
    }

    @Test
    void instrumentedCodeVerifiesAndComputesTheSame() throws Exception {
        byte[] instrumented = PreemptTransformer.instrument(classBytes(Loops.class.getName()), getClass().getClassLoader()).bytes();
        assertThat(ClassFile.of().verify(instrumented)).as("ClassFile verifier").isEmpty();

        // Defined by a fresh loader, so the JVM's own verifier checks it too (app classes are verified).
        ClassLoader child = new ClassLoader(getClass().getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.equals(Loops.class.getName())) {
                    synchronized (getClassLoadingLock(name)) {
                        Class<?> c = findLoadedClass(name);
                        return c != null ? c : defineClass(name, instrumented, 0, instrumented.length);
                    }
                }
                return super.loadClass(name, resolve);
            }
        };
        Class<?> k = child.loadClass(Loops.class.getName());
        assertThat(k).isNotSameAs(Loops.class);
        for (String m : List.of("sumTo", "nested", "doWhile", "switchInLoop", "fib", "exceptionsInLoop", "wide", "lambda", "breakOut")) {
            Method orig = Loops.class.getMethod(m, int.class);
            Method inst = k.getMethod(m, int.class);
            for (int n : new int[] {0, 1, 7, 25}) {
                assertThat(inst.invoke(null, n)).as("%s(%d)", m, n).isEqualTo(orig.invoke(null, n));
            }
        }
        Object o = k.getConstructor(long.class).newInstance(5L);
        Loops p = new Loops(5L);
        assertThat(k.getMethod("synchronizedLoop", int.class).invoke(o, 10)).isEqualTo(p.synchronizedLoop(10));
        assertThat(k.getMethod("synchronizedBlock", int.class).invoke(o, 10)).isEqualTo(p.synchronizedBlock(10));
    }

    @Test
    void theWarmUpInstrumentsTheTransformersOwnClassFile() {
        // premain's warm-up must really run the class-file API (a 0 here means it read nothing
        // and the first named class would pay the cold start inside a goroutine again).
        assertThat(PreemptTransformer.warmUp()).isGreaterThan(10);
    }

    @Test
    void prefixesMatchOnPackageAndClassBoundaries() {
        PreemptTransformer t = new PreemptTransformer(List.of("com.example", "org.acme.Solver"), null, false);
        assertThat(t.matches("com/example/Foo")).isTrue();
        assertThat(t.matches("com/example/sub/Bar$1")).isTrue();
        assertThat(t.matches("com/examples/Foo")).as("another package that shares the prefix").isFalse();
        assertThat(t.matches("org/acme/Solver")).isTrue();
        assertThat(t.matches("org/acme/Solver$Step")).as("a nested class").isTrue();
        assertThat(t.matches("org/acme/SolverTest")).isFalse();
        assertThat(t.matches("org/other/Solver")).isFalse();
    }

    @Test
    void theTransformerLeavesOtherClassesAlone() {
        PreemptTransformer t = new PreemptTransformer(List.of("io.gosched.agent.samples.Outer"), null, false);
        byte[] loops = classBytes(Loops.class.getName());
        ClassLoader l = getClass().getClassLoader();
        assertThat(t.transform(null, l, "io/gosched/agent/samples/Loops", null, null, loops)).as("not named").isNull();
        assertThat(t.transform(null, null, "io/gosched/agent/samples/Outer", null, null, classBytes("io.gosched.agent.samples.Outer")))
                .as("the bootstrap loader cannot see the runtime").isNull();
        byte[] inner = t.transform(null, l, "io/gosched/agent/samples/Outer$Inner", null, null, classBytes("io.gosched.agent.samples.Outer$Inner"));
        assertThat(inner).as("a nested class of a named class").isNotNull();
        assertThat(t.instrumented()).containsExactly("io.gosched.agent.samples.Outer$Inner");
        assertThat(t.transform(null, l, "io/gosched/agent/samples/Outer", null, null, new byte[] {1, 2, 3}))
                .as("a class it cannot parse keeps its bytes").isNull();
    }

    @Test
    void badArgumentsNameWhatIsWrong() {
        assertThat(PreemptAgent.parse(" com.example.app , org.acme.Solver")).containsExactly("com.example.app", "org.acme.Solver");
        assertThatThrownBy(() -> PreemptAgent.parse(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no package or class prefixes").hasMessageContaining("-javaagent:");
        assertThatThrownBy(() -> PreemptAgent.parse("com.a,,com.b")).hasMessageContaining("empty prefix");
        assertThatThrownBy(() -> PreemptAgent.parse("com.a/b")).hasMessageContaining("\"com.a/b\" is not a package or class name");
        assertThatThrownBy(() -> PreemptAgent.parse("java.util")).hasMessageContaining("\"java.util\" would instrument java");
        assertThatThrownBy(() -> PreemptAgent.parse("io.gosched")).hasMessageContaining("would instrument io.gosched.runtime");
        assertThatThrownBy(() -> PreemptAgent.parse("io.gosched.sync.Mutex")).hasMessageContaining("would instrument io.gosched.sync");
        assertThat(PreemptAgent.parse("io.gosched.bench.HogState")).containsExactly("io.gosched.bench.HogState");
    }
}
