package vtcount;

import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.MethodTransform;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarFile;

/**
 * Probe (not part of the build): a Java agent that counts, exactly, how often virtual threads
 * unmount: it adds a call to {@link VtCount#unmount} at the start of
 * java.lang.VirtualThread.yieldContinuation (every unmount: a park, Thread.yield, a blocked
 * monitor enter) and one to {@link VtCount#await} at the start of LinkedTransferQueue's
 * DualNode.await (every SynchronousQueue put or take that did not find its partner waiting, and
 * so spins and then maybe parks). Build and use: see bench/probes/vtcount/build.sh.
 */
public final class Agent {
    private Agent() {}

    public static void premain(String args, Instrumentation inst) throws Exception {
        // The counter comes in a jar of its own beside the agent's (vtcount-boot.jar): on the boot
        // class path, a class of the agent's own jar would be loaded by the boot loader too.
        String jar = Agent.class.getProtectionDomain().getCodeSource().getLocation().getPath();
        inst.appendToBootstrapClassLoaderSearch(new JarFile(jar.replace("vtcount.jar", "vtcount-boot.jar")));
        Class<?> counter = Class.forName("vtcount.VtCount", true, null);
        // java.base must read the boot loader's unnamed module to link the calls.
        inst.redefineModule(Object.class.getModule(), Set.of(counter.getModule()), Map.of(), Map.of(), Set.of(), Map.of());
        ClassDesc vc = ClassDesc.of("vtcount.VtCount");
        ClassFileTransformer t = new ClassFileTransformer() {
            @Override
            public byte[] transform(Module module, ClassLoader loader, String name, Class<?> cls, ProtectionDomain pd, byte[] bytes) {
                String method = switch (name) {
                    case "java/lang/VirtualThread" -> "yieldContinuation";
                    case "java/util/concurrent/LinkedTransferQueue$DualNode" -> "await";
                    default -> null;
                };
                if (method == null) {
                    return null;
                }
                String call = method.equals("await") ? "await" : "unmount";
                try {
                    ClassFile cf = ClassFile.of();
                    return cf.transformClass(cf.parse(bytes), ClassTransform.transformingMethods(
                            m -> m.methodName().equalsString(method),
                            MethodTransform.transformingCode(CodeTransform.ofStateful(() -> new CodeTransform() {
                                boolean done;

                                @Override
                                public void accept(CodeBuilder b, CodeElement e) {
                                    if (!done) {
                                        b.invokestatic(vc, call, MethodTypeDesc.ofDescriptor("()V"));
                                        done = true;
                                    }
                                    b.with(e);
                                }
                            }))));
                } catch (Throwable e) {
                    e.printStackTrace();
                    return null;
                }
            }
        };
        inst.addTransformer(t, true);
        for (Class<?> c : inst.getAllLoadedClasses()) {
            String n = c.getName();
            if (n.equals("java.lang.VirtualThread") || n.equals("java.util.concurrent.LinkedTransferQueue$DualNode")) {
                inst.retransformClasses(c);
            }
        }
    }
}
