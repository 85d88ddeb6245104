package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Go.withLabels and Go.labels: runtime/pprof's label tests under Go's names, and inheritance. */
@Timeout(60)
class LabelsTest {

    /** Go: TestContextLabels — labels set by Do are seen inside, merged when nested, gone after. */
    @Test
    void TestContextLabels() throws Exception {
        GoTesting.runGo(1, () -> {
            assertEquals(Map.of(), Go.labels(), "no labels at first, and never null");
            Go.withLabels(Map.of("key", "value"), () -> {
                assertEquals(Map.of("key", "value"), Go.labels());
                Go.withLabels(Map.of("key2", "value2"), () ->
                        assertEquals(Map.of("key", "value", "key2", "value2"), Go.labels()));
                Go.withLabels(Map.of("key", "value3"), () ->
                        assertEquals(Map.of("key", "value3"), Go.labels(), "a key set again takes the new value"));
                assertEquals(Map.of("key", "value"), Go.labels(), "restored after the inner Do");
            });
            assertEquals(Map.of(), Go.labels());
        });
    }

    /** Go: TestLabelMapStringer — labels print sorted, quoted, as pprof's labelMap.String. */
    @Test
    void TestLabelMapStringer() {
        assertEquals("{}", Traceback.labelsString(Map.of()));
        assertEquals("{\"foo\":\"bar\"}", Traceback.labelsString(Map.of("foo", "bar")));
        Map<String, String> m = new LinkedHashMap<>();
        m.put("key4WithNewline", "\nvalue4");
        m.put("key3", "value3");
        m.put("foo", "bar");
        m.put("key1", "value1");
        m.put("key2", "value2");
        assertEquals("{\"foo\":\"bar\", \"key1\":\"value1\", \"key2\":\"value2\", \"key3\":\"value3\", \"key4WithNewline\":\"\\nvalue4\"}",
                Traceback.labelsString(m));
    }

    /** Go: TestDoLabels-style — the labels are restored also when the body panics. */
    @Test
    void labelsAreRestoredWhenTheBodyThrows() throws Exception {
        GoTesting.runGo(1, () -> {
            assertThrows(IllegalStateException.class, () -> Go.withLabels(Map.of("a", "b"), () -> {
                throw new IllegalStateException("boom");
            }));
            assertEquals(Map.of(), Go.labels());
        });
    }

    /** Goroutines started inside inherit the labels, keep them after Do returns, and pass them on. */
    @Test
    void goroutinesStartedInsideInheritTheLabels() throws Exception {
        GoTesting.runGo(2, () -> {
            Chan<Map<String, String>> seen = Chan.make(4);
            Chan<Integer> release = Chan.make();
            Go.withLabels(Map.of("job", "7"), () -> Go.go(() -> {
                release.recv(); // runs on after the parent's withLabels has returned
                seen.send(Go.labels());
                Go.withLabels(Map.of("step", "2"), () -> Go.go(() -> seen.send(Go.labels())));
            }));
            Go.go(() -> seen.send(Go.labels())); // started outside: no labels
            assertEquals(Map.of(), seen.recv());
            release.send(1);
            assertEquals(Map.of("job", "7"), seen.recv());
            assertEquals(Map.of("job", "7", "step", "2"), seen.recv());
        });
    }

    /** A platform thread's labels go to the goroutines it starts with GoRuntime.go. */
    @Test
    void platformThreadLabelsGoToItsGoroutines() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            AtomicReference<Map<String, String>> got = new AtomicReference<>();
            java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
            Go.withLabels(Map.of("tenant", "acme"), () -> rt.go(() -> {
                got.set(Go.labels());
                done.countDown();
            }));
            assertTrue(done.await(10, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(Map.of("tenant", "acme"), got.get());
            assertEquals(Map.of(), Go.labels(), "restored on the thread");
        }
    }

    /** A recording keeps each labelled goroutine's labels, for the trace export's args. */
    @Test
    void aTraceRecordingKeepsTheLabelsOfItsGoroutines() throws Exception {
        Trace.Recording[] recording = new Trace.Recording[1];
        long[] ids = new long[2];
        GoTesting.runGo(1, () -> {
            Trace.Recording rec = Go.runtime().trace().start(1024);
            recording[0] = rec;
            try {
                Chan<Long> labelled = Chan.make(1);
                Chan<Long> plain = Chan.make(1);
                Go.withLabels(Map.of("job", "9"), () -> Go.go(() -> labelled.send(Go.goid())));
                Go.go(() -> plain.send(Go.goid()));
                ids[0] = labelled.recv();
                ids[1] = plain.recv();
            } finally {
                rec.stop();
            }
        });
        Map<Long, Map<String, String>> labels = recording[0].labels();
        assertEquals(Map.of("job", "9"), labels.get(ids[0]));
        assertThat(labels).doesNotContainKey(ids[1]);
    }

    @Test
    void nullKeysAndValuesAreRefused() {
        Map<String, String> m = new java.util.HashMap<>();
        m.put("k", null);
        NullPointerException e = assertThrows(NullPointerException.class, () -> Go.withLabels(m, () -> { }));
        assertThat(e.getMessage()).contains("k");
        assertThrows(NullPointerException.class, () -> Go.withLabels(null, () -> { }));
    }
}
