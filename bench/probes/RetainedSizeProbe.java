package io.gosched.api.budget;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Probe for docs/memory.md (not part of the build): how close {@link JsonSize} comes to the heap
 * that parsed JSON values really retain. For each shape it parses {@code copies} documents from
 * bytes (as the WebFlux decoder does), keeps them all, and compares the live heap after a full GC
 * (before minus after, per value) with the estimate.
 *
 * <pre>
 * ./mvnw -B -q -pl scheduler-web -am -DskipTests package
 * java -Djarmode=tools -jar scheduler-web/target/scheduler-web-0.1.0-SNAPSHOT.jar extract --destination /tmp/gs
 * javac -cp '/tmp/gs/lib/*' -d /tmp/probe bench/probes/RetainedSizeProbe.java
 * java -Xmx2g -cp "/tmp/probe:/tmp/gs/lib/*" io.gosched.api.budget.RetainedSizeProbe
 * </pre>
 */
public class RetainedSizeProbe {

    static final JsonMapper JSON = JsonMapper.builder().build();

    public static void main(String[] args) throws Exception {
        Map<String, IntFunction<String>> shapes = new LinkedHashMap<>();
        shapes.put("60 KB ASCII string", i -> "\"" + "x".repeat(60_000 - 8) + i % 10 + "\"");
        shapes.put("1 KB ASCII string", i -> "\"" + "y".repeat(1000) + i + "\"");
        shapes.put("small int", i -> Integer.toString(1000 + i));
        shapes.put("{\"n\":i} (1 member)", i -> "{\"n\":" + (1000 + i) + "}");
        shapes.put("20 members, shared names", i -> {
            StringBuilder sb = new StringBuilder("{");
            for (int k = 0; k < 20; k++) {
                sb.append(k == 0 ? "" : ",").append("\"field").append(k).append("\":").append(i * 31 + k);
            }
            return sb.append('}').toString();
        });
        shapes.put("20 members, unique names", i -> {
            StringBuilder sb = new StringBuilder("{");
            for (int k = 0; k < 20; k++) {
                sb.append(k == 0 ? "" : ",").append("\"u").append(i).append('_').append(k).append("\":\"v").append(k).append('"');
            }
            return sb.append('}').toString();
        });
        shapes.put("array of 1000 ints", i -> {
            StringBuilder sb = new StringBuilder("[");
            for (int k = 0; k < 1000; k++) {
                sb.append(k == 0 ? "" : ",").append(100_000 + i + k);
            }
            return sb.append(']').toString();
        });
        shapes.put("array of 100 doubles", i -> {
            StringBuilder sb = new StringBuilder("[");
            for (int k = 0; k < 100; k++) {
                sb.append(k == 0 ? "" : ",").append(i + k + 0.5);
            }
            return sb.append(']').toString();
        });
        shapes.put("nested records (50 x {id,name,tags[3],ok})", i -> {
            StringBuilder sb = new StringBuilder("{\"items\":[");
            for (int k = 0; k < 50; k++) {
                sb.append(k == 0 ? "" : ",").append("{\"id\":").append(i * 100 + k).append(",\"name\":\"item-").append(k)
                        .append("\",\"tags\":[\"a\",\"b\",\"c\"],\"ok\":true}");
            }
            return sb.append("]}").toString();
        });
        shapes.put("2 KB non-Latin-1 string", i -> "\"" + "\u4e2d".repeat(2000) + i + "\"");
        shapes.put("job body: 20 steps", i -> {
            StringBuilder sb = new StringBuilder("{\"workload\":{\"steps\":[");
            for (int k = 0; k < 20; k++) {
                sb.append(k == 0 ? "" : ",").append("{\"op\":\"compute\",\"us\":").append(10 + k + i % 7).append('}');
            }
            return sb.append("]}}").toString();
        });

        System.out.printf("layout %s, max heap %d MiB%n", JsonSize.layout(), Runtime.getRuntime().maxMemory() >> 20);
        System.out.printf("%-44s %8s %12s %12s %7s%n", "shape", "copies", "measured B", "estimate B", "est/meas");
        for (var e : shapes.entrySet()) {
            measure(e.getKey(), e.getValue());
        }
    }

    static void measure(String name, IntFunction<String> doc) throws Exception {
        long one = JsonSize.of(JSON.readTree(doc.apply(0)));
        int copies = (int) Math.max(200, Math.min(200_000, (256L << 20) / Math.max(one, 16)));
        List<byte[]> texts = new ArrayList<>(copies);
        for (int i = 0; i < copies; i++) {
            texts.add(doc.apply(i).getBytes(StandardCharsets.UTF_8));
        }
        JsonNode[] kept = new JsonNode[copies];
        long before = liveHeap();
        for (int i = 0; i < copies; i++) {
            kept[i] = JSON.readTree(texts.get(i));
        }
        long after = liveHeap();
        java.lang.ref.Reference.reachabilityFence(texts); // else the GC frees the texts and hides the trees
        long estimate = 0;
        for (JsonNode n : kept) {
            estimate += JsonSize.of(n);
        }
        double measured = (double) (after - before) / copies; // kept[] existed before
        System.out.printf("%-44s %8d %12.0f %12.0f %7.2f%n", name, copies, measured, (double) estimate / copies,
                estimate / copies / measured);
        if (kept[copies - 1] == null) {
            throw new AssertionError();
        }
    }

    static long liveHeap() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
