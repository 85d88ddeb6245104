package io.gosched.service.budget;

import io.gosched.service.budget.JsonSize;

import java.lang.management.ManagementFactory;
import java.util.function.IntFunction;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The estimate's arithmetic for each node kind, and (coarsely: a test JVM is shared) that it does
 * not fall short of the heap that parsed values really retain. The fine comparison is
 * bench/probes/RetainedSizeProbe.java, recorded in docs/memory.md.
 */
class JsonSizeTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void hotSpotsDefaultLayoutGivesTheseSizes() {
        // Compressed oops and class pointers, the default below 32 GB (12-byte headers).
        JsonSize.Layout l = new JsonSize.Layout(12, 4);
        assertThat(l.object(0, 4)).as("an int node").isEqualTo(16);
        assertThat(l.object(1, 0) + l.string(5, true)).as("a text node: node 16 + String 24 + byte[] 16 + 5").isEqualTo(16 + 24 + 24);
        assertThat(l.object(2, 0) + l.object(1, 8) + l.refArray(10)).as("array node + ArrayList + Object[10]").isEqualTo(24 + 24 + 56);
        assertThat(l.object(6, 5 * 4 + 1) + l.refArray(16) + l.object(5, 4)).as("LinkedHashMap + table[16] + entry").isEqualTo(64 + 80 + 40);
        // Compact object headers (8 bytes), what the service and the tests run with.
        JsonSize.Layout c = new JsonSize.Layout(8, 4);
        assertThat(c.object(0, 4)).isEqualTo(16);
        assertThat(c.object(2, 0) + c.object(1, 8) + c.refArray(10)).isEqualTo(16 + 24 + 56);
        assertThat(c.string(5, true)).as("String 8 + 4 + 6 -> 24, byte[] 8 + 4 + 5 -> 24").isEqualTo(24 + 24);
    }

    @Test
    void eachNodeKindAddsUpAsThisVmLaysItOut() {
        JsonSize.Layout l = JsonSize.layout();
        long intNode = l.object(0, 4), container = l.object(2, 0), list = l.object(1, 8);
        assertThat(JsonSize.of(JSON.readTree("true"))).as("a shared singleton").isZero();
        assertThat(JsonSize.of(JSON.readTree("null"))).isZero();
        assertThat(JsonSize.of(JSON.readTree("12345"))).isEqualTo(intNode);
        assertThat(JsonSize.of(JSON.readTree("12345678901"))).isEqualTo(l.object(0, 8));
        assertThat(JsonSize.of(JSON.readTree("1.5"))).isEqualTo(l.object(0, 8));
        assertThat(JsonSize.of(JSON.readTree("\"hello\""))).isEqualTo(l.object(1, 0) + l.string(5, true));
        assertThat(JsonSize.of(JSON.readTree("\"\u4e2d\u6587\""))).as("two bytes a character beyond Latin-1")
                .isEqualTo(l.object(1, 0) + l.string(2, false));
        assertThat(JsonSize.string("\u4e2d".repeat(10))).isEqualTo(l.string(10, false));
        assertThat(JsonSize.of(JSON.readTree("[1,2,3]"))).isEqualTo(container + list + l.refArray(10) + 3 * intNode);
        assertThat(JsonSize.of(JSON.readTree("[]"))).isEqualTo(container + list);
        // node + LinkedHashMap + table[16] + entry + name "a" + int
        assertThat(JsonSize.of(JSON.readTree("{\"a\":1}"))).isEqualTo(container + l.object(6, 5 * 4 + 1) + l.refArray(16)
                + l.object(5, 4) + l.string(1, true) + intNode);
        assertThat(JsonSize.hashTable(12)).isEqualTo(16);
        assertThat(JsonSize.hashTable(13)).isEqualTo(32);
        assertThat(JsonSize.listCapacity(11)).isEqualTo(15);
        assertThat(JsonSize.listCapacity(1000)).isEqualTo(1234);
        assertThat(JsonSize.of(null)).isZero();
    }

    @Test
    void deepNestingIsWalkedWithoutRecursion() {
        JsonSize.Layout l = JsonSize.layout();
        String deep = "[".repeat(400) + "1" + "]".repeat(400);
        assertThat(JsonSize.of(JSON.readTree(deep))).isEqualTo(400 * (l.object(2, 0) + l.object(1, 8) + l.refArray(10)) + l.object(0, 4));
    }

    @Test
    void theEstimateDoesNotFallShortOfTheRetainedHeap() throws Exception {
        check("60 KB strings", 800, i -> "\"" + "x".repeat(60_000) + i + "\"");
        check("arrays of 1000 ints", 3000, i -> {
            StringBuilder sb = new StringBuilder("[");
            for (int k = 0; k < 1000; k++) {
                sb.append(k == 0 ? "" : ",").append(100_000 + i + k);
            }
            return sb.append(']').toString();
        });
        check("objects with unique member names", 20_000, i -> {
            StringBuilder sb = new StringBuilder("{");
            for (int k = 0; k < 20; k++) {
                sb.append(k == 0 ? "" : ",").append("\"u").append(i).append('_').append(k).append("\":\"v").append(k).append('"');
            }
            return sb.append('}').toString();
        });
    }

    /** Parses {@code n} documents and keeps them; the live heap after a full GC grows by about the estimate, not more. */
    private static void check(String shape, int n, IntFunction<String> doc) throws Exception {
        byte[][] texts = new byte[n][];
        for (int i = 0; i < n; i++) {
            texts[i] = doc.apply(i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
        JsonNode[] kept = new JsonNode[n];
        long before = liveHeap();
        for (int i = 0; i < n; i++) {
            kept[i] = JSON.readTree(texts[i]);
        }
        long after = liveHeap();
        java.lang.ref.Reference.reachabilityFence(texts);
        long estimate = 0;
        for (JsonNode k : kept) {
            estimate += JsonSize.of(k);
        }
        double ratio = (double) estimate / (after - before);
        assertThat(ratio).as("%s: estimate %d B against %d B measured", shape, estimate, after - before).isBetween(0.9, 2.0);
    }

    private static long liveHeap() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(30);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
