package io.gosched.runtime;

import static io.gosched.runtime.GoTesting.await;
import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.runtime.GoTesting.Mode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The channel contract, written once and run for capacities {0, 1, 10} (Go's {@code for chanCap}
 * loops), both inside goroutines and on platform threads. Every assertion names the capacity.
 */
class ChanContractTest {
    static Stream<Arguments> capsAndModes() {
        List<Arguments> a = new ArrayList<>();
        for (int cap : new int[] {0, 1, 10}) {
            for (Mode m : Mode.values()) {
                a.add(Arguments.of(cap, m));
            }
        }
        return a.stream();
    }

    private static String at(int cap, Mode mode) {
        return "cap=" + cap + " " + mode;
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void receiveFromEmptyBlocksAndNonBlockingReceiveDoesNot(int cap, Mode mode) throws Exception {
        mode.run(4, () -> {
            Chan<Integer> c = Chan.make(cap);
            AtomicBoolean recv1 = new AtomicBoolean();
            AtomicBoolean recv2 = new AtomicBoolean();
            spawn(() -> {
                c.recv();
                recv1.set(true);
            });
            spawn(() -> {
                c.recv2();
                recv2.set(true);
            });
            await("two blocked receivers " + at(cap, mode), () -> c.waitingReceivers() == 2);
            assertThat(recv1.get() || recv2.get()).as("receive from empty chan returned, %s", at(cap, mode)).isFalse();
            assertThat(c.tryRecv()).as("non-blocking receive from empty chan, %s", at(cap, mode)).isNull();
            assertThat(Select.trySelect(Select.recv(c)).index()).as("select default, %s", at(cap, mode)).isEqualTo(-1);
            c.send(0);
            c.send(0);
            await("both receivers done " + at(cap, mode), () -> recv1.get() && recv2.get());
            assertThat(c.len()).as("len after hand-off, %s", at(cap, mode)).isZero();
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void sendToFullBlocksAndNonBlockingSendDoesNot(int cap, Mode mode) throws Exception {
        mode.run(4, () -> {
            Chan<Integer> c = Chan.make(cap);
            for (int i = 0; i < cap; i++) {
                assertThat(c.trySend(i)).as("trySend into room, %s", at(cap, mode)).isTrue();
            }
            AtomicBoolean sent = new AtomicBoolean();
            spawn(() -> {
                c.send(-1);
                sent.set(true);
            });
            await("a blocked sender " + at(cap, mode), () -> c.waitingSenders() == 1);
            assertThat(sent.get()).as("send to full chan returned, %s", at(cap, mode)).isFalse();
            assertThat(c.trySend(99)).as("non-blocking send to full chan, %s", at(cap, mode)).isFalse();
            assertThat(c.recv()).as("head after unblocking, %s", at(cap, mode)).isEqualTo(cap == 0 ? -1 : 0);
            await("sender done " + at(cap, mode), sent::get);
            // FIFO is kept across the buffered rotate: the blocked sender's value comes last.
            for (int i = 1; i < cap; i++) {
                assertThat(c.recv()).as("buffered order, %s", at(cap, mode)).isEqualTo(i);
            }
            if (cap > 0) {
                assertThat(c.recv()).as("rotated sender value last, %s", at(cap, mode)).isEqualTo(-1);
            }
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void closedChannelDrainsThenReportsClosed(int cap, Mode mode) throws Exception {
        mode.run(2, () -> {
            Chan<Integer> c = Chan.make(cap);
            for (int i = 0; i < cap; i++) {
                c.send(i);
            }
            c.close();
            assertThat(c.isClosed()).as("isClosed, %s", at(cap, mode)).isTrue();
            assertThat(c.len()).as("len after close, %s", at(cap, mode)).isEqualTo(cap);
            for (int i = 0; i < cap; i++) {
                assertThat(c.recv()).as("buffered value %d after close, %s", i, at(cap, mode)).isEqualTo(i);
            }
            assertThat(c.recv()).as("recv of closed drained chan, %s", at(cap, mode)).isNull();
            assertThat(c.recv2()).as("recv2 of closed drained chan, %s", at(cap, mode)).isEqualTo(new Received<>(null, false));
            assertThat(c.tryRecv()).as("tryRecv of closed drained chan, %s", at(cap, mode)).isEqualTo(new Received<>(null, false));
            Selected s = Select.select(Select.recv(c));
            assertThat(s).as("select recv on closed chan, %s", at(cap, mode)).isEqualTo(new Selected(0, null, false));
            assertThatThrownBy(() -> c.send(1)).as("send on closed, %s", at(cap, mode))
                    .isInstanceOf(ChanClosedException.class).hasMessage("send on closed channel");
            assertThatThrownBy(() -> c.trySend(1)).as("trySend on closed, %s", at(cap, mode))
                    .isInstanceOf(ChanClosedException.class);
            assertThatThrownBy(() -> Select.trySelect(Select.send(c, 1))).as("select send on closed, %s", at(cap, mode))
                    .isInstanceOf(ChanClosedException.class);
            assertThatThrownBy(c::close).as("close of closed, %s", at(cap, mode))
                    .isInstanceOf(ChanClosedException.class).hasMessage("close of closed channel");
            assertThat(c.sendAsync(1)).as("sendAsync on closed, %s", at(cap, mode)).isCompletedExceptionally();
            assertThat(c.recvAsync().getNow(null)).as("recvAsync on closed, %s", at(cap, mode)).isEqualTo(new Received<>(null, false));
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void closeWakesEveryReceiverAndEverySender(int cap, Mode mode) throws Exception {
        mode.run(4, () -> {
            int k = 5;
            Chan<Integer> r = Chan.make(cap);
            AtomicInteger closedSeen = new AtomicInteger();
            for (int i = 0; i < k; i++) {
                spawn(() -> {
                    Received<Integer> got = r.recv2();
                    if (!got.ok() && got.value() == null) {
                        closedSeen.incrementAndGet();
                    }
                });
            }
            CompletableFuture<Received<Integer>> asyncRecv = r.recvAsync();
            await("receivers blocked " + at(cap, mode), () -> r.waitingReceivers() == k + 1);
            r.close();
            await("receivers woken by close " + at(cap, mode), () -> closedSeen.get() == k);
            assertThat(asyncRecv.get(5, TimeUnit.SECONDS)).as("async receiver at close, %s", at(cap, mode)).isEqualTo(new Received<>(null, false));

            Chan<Integer> s = Chan.make(cap);
            for (int i = 0; i < cap; i++) {
                s.send(i);
            }
            AtomicInteger threw = new AtomicInteger();
            for (int i = 0; i < k; i++) {
                spawn(() -> {
                    try {
                        s.send(7);
                    } catch (ChanClosedException e) {
                        threw.incrementAndGet();
                    }
                });
            }
            CompletableFuture<Void> asyncSend = s.sendAsync(8);
            await("senders blocked " + at(cap, mode), () -> s.waitingSenders() == k + 1);
            s.close();
            await("senders woken by close " + at(cap, mode), () -> threw.get() == k);
            assertThat(asyncSend).as("async sender at close, %s", at(cap, mode)).failsWithin(5, TimeUnit.SECONDS);
            assertThat(s.len()).as("buffer kept at close, %s", at(cap, mode)).isEqualTo(cap);
            assertThat(s.waitingSenders()).as("no sender left queued, %s", at(cap, mode)).isZero();
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void valuesArriveInFifoOrderThroughRecvRecv2AndRange(int cap, Mode mode) throws Exception {
        mode.run(2, () -> {
            int n = 100;
            Chan<Integer> c = Chan.make(cap);
            spawn(() -> {
                for (int i = 0; i < 3 * n; i++) {
                    c.send(i);
                }
                c.close();
            });
            for (int i = 0; i < n; i++) {
                assertThat(c.recv()).as("recv order, %s", at(cap, mode)).isEqualTo(i);
            }
            for (int i = n; i < 2 * n; i++) {
                assertThat(c.recv2()).as("recv2 order, %s", at(cap, mode)).isEqualTo(new Received<>(i, true));
            }
            int i = 2 * n;
            for (int v : c) {
                assertThat(v).as("range order, %s", at(cap, mode)).isEqualTo(i++);
            }
            assertThat(i).as("range ended at close, %s", at(cap, mode)).isEqualTo(3 * n);
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void manySendersAndReceiversLoseAndDuplicateNothing(int cap, Mode mode) throws Exception {
        mode.run(4, () -> {
            int p = 4;
            int l = 1000 * GoTesting.STRESS;
            Chan<Integer> c = Chan.make(cap);
            Chan<Map<Integer, Integer>> done = Chan.make();
            for (int s = 0; s < p; s++) {
                spawn(() -> {
                    for (int i = 0; i < l; i++) {
                        c.send(i);
                    }
                });
            }
            for (int r = 0; r < p; r++) {
                spawn(() -> {
                    Map<Integer, Integer> recv = new HashMap<>();
                    for (int i = 0; i < l; i++) {
                        recv.merge(c.recv(), 1, Integer::sum);
                    }
                    done.send(recv);
                });
            }
            Map<Integer, Integer> recv = new HashMap<>();
            for (int r = 0; r < p; r++) {
                done.recv().forEach((k, v) -> recv.merge(k, v, Integer::sum));
            }
            assertThat(recv).as("distinct values, %s", at(cap, mode)).hasSize(l);
            assertThat(recv.values()).as("each value received once per sender, %s", at(cap, mode)).allMatch(v -> v == p);
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void lenCapAndNullValues(int cap, Mode mode) throws Exception {
        mode.run(1, () -> {
            Chan<Integer> c = Chan.make(cap);
            assertThat(c.len()).as("len, %s", at(cap, mode)).isZero();
            assertThat(c.cap()).as("cap, %s", at(cap, mode)).isEqualTo(cap);
            for (int i = 0; i < cap; i++) {
                c.send(i);
            }
            assertThat(c.len()).as("len full, %s", at(cap, mode)).isEqualTo(cap);
            assertThatThrownBy(() -> c.send(null)).as("null send, %s", at(cap, mode)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> c.trySend(null)).as("null trySend, %s", at(cap, mode)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> c.sendAsync(null)).as("null sendAsync, %s", at(cap, mode)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> Select.send(c, null)).as("null select send, %s", at(cap, mode)).isInstanceOf(NullPointerException.class);
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void asyncOperationsPairWithBlockingOnes(int cap, Mode mode) throws Exception {
        mode.run(2, () -> {
            Chan<Integer> c = Chan.make(cap);
            int n = 200;
            List<CompletableFuture<Void>> sf = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                sf.add(c.sendAsync(i)); // queue up: nobody receives yet
            }
            assertThat(c.waitingSenders()).as("pending async sends, %s", at(cap, mode)).isEqualTo(n - cap);
            for (int i = 0; i < n; i++) {
                assertThat(c.recv()).as("async sends delivered in order, %s", at(cap, mode)).isEqualTo(i);
            }
            for (CompletableFuture<Void> f : sf) {
                assertThat(f).as("async send completed, %s", at(cap, mode)).succeedsWithin(5, TimeUnit.SECONDS);
            }
            List<CompletableFuture<Received<Integer>>> rf = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                rf.add(c.recvAsync());
            }
            assertThat(c.waitingReceivers()).as("pending async receives, %s", at(cap, mode)).isEqualTo(n);
            for (int i = 0; i < n; i++) {
                c.send(i);
            }
            for (int i = 0; i < n; i++) {
                assertThat(rf.get(i).get(5, TimeUnit.SECONDS)).as("async receives in order, %s", at(cap, mode)).isEqualTo(new Received<>(i, true));
            }
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void cancelledAsyncOperationsAreWithdrawn(int cap, Mode mode) throws Exception {
        mode.run(2, () -> {
            Chan<Integer> c = Chan.make(cap);
            for (int i = 0; i < cap; i++) {
                c.send(i);
            }
            CompletableFuture<Void> s = c.sendAsync(100);
            assertThat(s.cancel(false)).as("cancel of a pending send, %s", at(cap, mode)).isTrue();
            assertThat(c.waitingSenders()).as("cancelled send dequeued, %s", at(cap, mode)).isZero();
            CompletableFuture<Void> t = c.sendAsync(101).orTimeout(1, TimeUnit.MILLISECONDS);
            assertThat(t).as("timed-out send, %s", at(cap, mode)).failsWithin(5, TimeUnit.SECONDS);
            await("timed-out send dequeued " + at(cap, mode), () -> c.waitingSenders() == 0);
            for (int i = 0; i < cap; i++) {
                assertThat(c.recv()).as("buffer intact, %s", at(cap, mode)).isEqualTo(i);
            }
            assertThat(c.tryRecv()).as("withdrawn values never delivered, %s", at(cap, mode)).isNull();

            CompletableFuture<Received<Integer>> r = c.recvAsync();
            assertThat(r.cancel(false)).as("cancel of a pending receive, %s", at(cap, mode)).isTrue();
            c.sendAsync(5);
            assertThat(c.recv()).as("value not taken by the cancelled receive, %s", at(cap, mode)).isEqualTo(5);

            CompletableFuture<Received<Integer>> done = c.recvAsync();
            c.send(6);
            assertThat(done.cancel(false)).as("cancel after completion, %s", at(cap, mode)).isFalse();
            assertThat(done.get()).as("result stands, %s", at(cap, mode)).isEqualTo(new Received<>(6, true));
        });
    }

    @ParameterizedTest(name = "cap={0} {1}")
    @MethodSource("capsAndModes")
    void selectSendAndReceiveAgainstPartners(int cap, Mode mode) throws Exception {
        mode.run(4, () -> {
            Chan<Integer> a = Chan.make(cap);
            Chan<Integer> b = Chan.make(cap);
            int n = 500;
            Map<Integer, Integer> got = new ConcurrentHashMap<>();
            Chan<Boolean> done = Chan.make();
            spawn(() -> {
                for (int i = 0; i < n; i++) {
                    Selected s = Select.select(Select.recv(a), Select.recv(b));
                    got.merge(s.<Integer>valueAs(), 1, Integer::sum);
                }
                done.send(true);
            });
            for (int i = 0; i < n; i++) {
                Selected s = Select.select(Select.send(i % 2 == 0 ? a : null, i), Select.send(i % 2 == 1 ? b : null, i));
                assertThat(s.index()).as("only the non-nil case fires, %s", at(cap, mode)).isEqualTo(i % 2);
            }
            done.recv();
            assertThat(got).as("every value once, %s", at(cap, mode)).hasSize(n);
            assertThat(got.values()).as("no duplicates, %s", at(cap, mode)).allMatch(v -> v == 1);
        });
    }
}
