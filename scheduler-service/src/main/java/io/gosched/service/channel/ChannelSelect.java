package io.gosched.service.channel;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.gosched.runtime.Chan;
import io.gosched.runtime.ChanClosedException;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.Received;
import io.gosched.runtime.Select;
import io.gosched.runtime.SelectCase;
import io.gosched.runtime.Selected;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.OpenLimit;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelForwarder;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.GoneException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.ServiceException;
import io.gosched.service.error.ShuttingDownException;
import io.gosched.service.metrics.ServiceMetrics;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.NullNode;

/**
 * Go's {@code select} over named channels for HTTP clients: one case fires, chosen uniformly
 * among the ready ones; the others neither take nor deliver anything, also when the wait ends by
 * its timeout, by shutdown or because the client went away.
 *
 * <h2>On one node: the runtime's own select</h2>
 * Every channel of the select lives here: the cases become {@link SelectCase}s and one
 * {@link Select} runs them, so the guarantee is the runtime's ({@code selectgo}). First a
 * {@link Select#trySelect} on the caller's thread (it parks nobody); if no case is ready, a
 * goroutine runs the blocking {@link Select#select} with one more case, a receive on a private
 * unbuffered channel {@code stop}. Ending the wait (timeout, shutdown, client gone) closes
 * {@code stop}: that case becomes ready, and the select either takes it (nothing else fired) or
 * had already fired a real case, whose outcome then stands, exactly as Go's
 * {@code select { ...; case <-ctx.Done(): }} does. No thread blocks: the goroutine parks, and the
 * answer is its result turned into a {@link Mono}. A real receive that fired after its client went
 * away puts the value back ({@code sendAsync}, possibly out of order), as the single receive does;
 * a send that fired was delivered and stands, as the single send's does.
 *
 * <h2>Across nodes: rounds of non-blocking attempts</h2>
 * In a cluster a select whose channels live (partly) on other nodes cannot park on all of them
 * at once: there is no atomic select across nodes. It runs as rounds: each round tries every case
 * once, in a fresh uniformly random order, without blocking (a local {@code trySend}/{@code
 * tryRecv}, or a forwarded send or receive with a zero timeout, which the home withdraws at once
 * if it cannot complete); the first attempt that succeeds ends the select, and since attempts run
 * one at a time and a failed attempt changes nothing, exactly one case fires. Between rounds the
 * select backs off ({@value #FIRST_BACK_OFF_MS} ms doubling to {@value #MAX_BACK_OFF_MS} ms) until
 * its deadline. Departures from Go, in docs/cluster.md: a case that becomes ready during a back-off
 * is seen only at the next round (latency up to the back-off), a partner that is itself waiting in
 * such a cross-node select is never paired with it (two cross-node selects do not meet; a blocked
 * single operation or a one-node select does), and the choice is uniform only among the cases
 * ready throughout a round.
 *
 * <p>Limits as the single operations': one place of {@code max-pending-channel-calls} for the
 * whole select (forced past a full memory budget when it only receives), each send's value
 * charged to its channel's share while it waits (429 when it does not fit, before anything is
 * kept). Thread-safe.
 */
public final class ChannelSelect {

    /** One case: a receive from {@code channel}, or a send of {@code value} (a JSON null is a value) on it. */
    public record Case(String channel, boolean send, JsonNode value) {
        public Case {
            Objects.requireNonNull(channel, "channel");
            if (send) {
                Objects.requireNonNull(value, "value of a send case (a JSON null is NullNode)");
            }
        }

        public static Case recv(String channel) {
            return new Case(channel, false, null);
        }

        public static Case send(String channel, JsonNode value) {
            return new Case(channel, true, value);
        }
    }

    /**
     * The answer: the {@code index} of the case that fired with, for a receive, its {@code value}
     * and Go's {@code ok} ({@code ok} false: the channel is closed and drained, the value null);
     * or {@code timedOut} with a {@code reason} ("timeout", "shutdown") when none fired.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Outcome(Integer index, JsonNode value, Boolean ok, Boolean timedOut, String reason) {

        static Outcome sent(int index) {
            return new Outcome(index, null, null, null, null);
        }

        static Outcome received(int index, JsonNode value, boolean ok) {
            return new Outcome(index, value == null ? NullNode.getInstance() : value, ok, null, null);
        }

        static Outcome none(String reason) {
            return new Outcome(null, null, null, true, reason);
        }

        /** True if a case fired. */
        public boolean fired() {
            return index != null;
        }
    }

    /** The first pause between two rounds of a cross-node select. */
    static final long FIRST_BACK_OFF_MS = 2;
    /** The longest pause between two rounds: the extra latency a cross-node select may add. */
    static final long MAX_BACK_OFF_MS = 100;

    private final ChannelRegistry registry;
    private final ChannelDirectory directory;
    private final ChannelForwarder forwarder;
    private final GoRuntime runtime;
    private final ServiceMetrics metrics;
    private final OpenLimit calls;
    private final ServiceShutdown shutdown;

    public ChannelSelect(ChannelService channels, GoRuntime runtime, ServiceMetrics metrics, ServiceBudget budget, ServiceShutdown shutdown) {
        this.registry = channels.registry();
        this.directory = channels.directory();
        this.forwarder = channels.forwarder();
        this.runtime = runtime;
        this.metrics = metrics;
        this.calls = budget.channelCalls();
        this.shutdown = shutdown;
    }

    /**
     * Waits at most {@code timeout} for one of {@code cases} to fire; see the class comment for
     * the guarantees. Errors as the single operations': not found (a channel no node has), closed
     * (a send case on a closed channel fired: Go panics), refused (a send's value does not fit,
     * too many channel calls open), shutting down; in a cluster also lost and backend unavailable.
     */
    public Mono<Outcome> select(List<Case> cases, Duration timeout) {
        shutdown.refuseNewWork();
        if (cases.isEmpty()) {
            throw new IllegalArgumentException("a select needs at least one case");
        }
        NamedChannel[] local = new NamedChannel[cases.size()];
        boolean allLocal = true;
        for (int i = 0; i < local.length; i++) {
            local[i] = registry.named(cases.get(i).channel());
            allLocal &= local[i] != null;
        }
        boolean freeing = cases.stream().noneMatch(Case::send); // only receives: frees bytes, as a receive does
        Mono<Outcome> answer = allLocal ? calls.guard(Mono.defer(() -> selectHere(cases, local, timeout)), freeing)
                : homes(cases, local).flatMap(targets -> calls.guard(Mono.defer(() -> rounds(cases, targets, timeout)), freeing));
        return answer
                .doOnSuccess(o -> metrics.channelOp("select", o == null ? "gone" : o.fired() ? "ok" : o.reason()))
                .doOnError(e -> metrics.channelOp("select", failure(e)));
    }

    // ---------------------------------------------------------------- every channel here: the runtime's select

    private Mono<Outcome> selectHere(List<Case> cases, NamedChannel[] chans, Duration timeout) {
        int n = cases.size();
        HeldValue[] held = new HeldValue[n];
        SelectCase[] sc = new SelectCase[n + 1];
        try {
            for (int i = 0; i < n; i++) {
                Case c = cases.get(i);
                if (c.send()) {
                    held[i] = HeldValue.offer(chans[i].share(), c.value()); // 429 before anything is kept
                    sc[i] = Select.send(chans[i].chan(), held[i]);
                } else {
                    sc[i] = Select.recv(chans[i].chan());
                }
            }
        } catch (RuntimeException refused) {
            settle(held, -1);
            throw refused;
        }
        // Fast path: a ready case fires on this thread; trySelect parks nobody.
        Selected now;
        try {
            now = Select.trySelect(java.util.Arrays.copyOf(sc, n));
        } catch (ChanClosedException e) {
            settle(held, -1);
            return Mono.error(closedSend(cases, chans));
        }
        if (now.index() >= 0 || timeout.isZero()) {
            settle(held, now.index());
            return Mono.just(now.index() >= 0 ? outcome(cases, now) : Outcome.none("timeout"));
        }

        Chan<Object> stop = Chan.make();
        sc[n] = Select.recv(stop);
        CompletableFuture<Selected> result = new CompletableFuture<>();
        try {
            runtime.go(() -> {
                try {
                    result.complete(Select.select(sc));
                } catch (Throwable t) { // never out of the goroutine: an uncaught exception would end the runtime
                    result.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException stopping) { // the runtime shuts down
            settle(held, -1);
            return Mono.error(new ShuttingDownException());
        }
        result.whenComplete((s, e) -> settle(held, s == null ? -1 : s.index()));

        AtomicReference<String> why = new AtomicReference<>();
        AtomicBoolean answered = new AtomicBoolean();
        Runnable end = () -> {
            try {
                stop.close(); // the stop case becomes ready: the select ends, by it or by a case that beat it
            } catch (ChanClosedException alreadyClosed) {
                // ended once already
            }
        };
        Disposable[] timer = new Disposable[1];
        return Mono.fromFuture(result, true)
                .onErrorMap(ChanClosedException.class, e -> closedSend(cases, chans))
                .map(s -> s.index() == n ? Outcome.none(why.get()) : outcome(cases, s))
                .doOnSubscribe(sub -> timer[0] = giveUpSignal(timeout).subscribe(reason -> {
                    why.compareAndSet(null, reason);
                    end.run();
                }))
                .doOnSuccess(o -> answered.set(true))
                .doOnError(e -> answered.set(true))
                .doFinally(signal -> {
                    if (timer[0] != null) {
                        timer[0].dispose();
                    }
                })
                .doOnCancel(() -> {
                    if (answered.get()) {
                        return;
                    }
                    // The client went away: end the wait; a receive that fired meanwhile puts its value back.
                    why.compareAndSet(null, "gone");
                    end.run();
                    result.thenAccept(s -> {
                        if (s.index() < n && !cases.get(s.index()).send() && s.ok()) {
                            putBack(chans[s.index()].chan(), s.value());
                        }
                    });
                });
    }

    /** Settles each send's charge: the one that fired ({@code fired}) is the channel's now, the others were never delivered. */
    private static void settle(HeldValue[] held, int fired) {
        for (int i = 0; i < held.length; i++) {
            if (held[i] == null) {
                continue;
            }
            if (i == fired) {
                held[i].buffered();
            } else {
                held[i].withdraw();
            }
        }
    }

    private static Outcome outcome(List<Case> cases, Selected s) {
        if (cases.get(s.index()).send()) {
            return Outcome.sent(s.index());
        }
        return Outcome.received(s.index(), s.ok() ? HeldValue.take(s.value()) : null, s.ok());
    }

    /**
     * A value taken for a client that went away goes back into its channel rather than being
     * swallowed (it may be seen out of order), charged again.
     */
    private void putBack(Chan<Object> ch, Object value) {
        HeldValue.take(value);
        Object back = value instanceof HeldValue h ? h.requeue() : value;
        ch.sendAsync(back).whenComplete((v, e) -> {
            if (back instanceof HeldValue h) {
                if (e == null) {
                    h.buffered();
                } else {
                    h.withdraw();
                }
            }
            metrics.channelOp("select", e == null ? "requeued" : "lost");
        });
    }

    /**
     * The 409 of a send case on a closed channel that fired (Go panics: "send on closed channel").
     * The runtime does not say which case; a channel stays closed once closed, so the send cases
     * whose channel is closed now are the candidates, the first of them named.
     */
    private static ServiceException closedSend(List<Case> cases, NamedChannel[] chans) {
        for (int i = 0; i < cases.size(); i++) {
            if (cases.get(i).send() && chans[i] != null && chans[i].chan().isClosed()) {
                return ConflictException.channelClosed(cases.get(i).channel()).with("index", i);
            }
        }
        return ConflictException.channelClosed(cases.stream().filter(Case::send).map(Case::channel).findFirst().orElse("?"));
    }

    // ---------------------------------------------------------------- channels on other nodes: rounds

    /** Where one case's channel lives: here ({@code local}) or on {@code home}. */
    private record Target(NamedChannel local, ChannelHome home) {}

    /**
     * The home of every case's channel, looked up once (off the caller's thread: the directory may
     * block): not found when no node has one, lost when it names this node's previous life.
     */
    private Mono<List<Target>> homes(List<Case> cases, NamedChannel[] local) {
        return Mono.fromCallable(() -> {
            Map<String, Target> byName = new LinkedHashMap<>();
            List<Target> targets = new ArrayList<>(cases.size());
            for (int i = 0; i < cases.size(); i++) {
                String name = cases.get(i).channel();
                if (local[i] != null) {
                    targets.add(new Target(local[i], null));
                    continue;
                }
                Target t = byName.get(name);
                if (t == null) {
                    Optional<ChannelHome> found = directory.home(name);
                    if (found.isEmpty()) {
                        throw new NotFoundException("channel", name);
                    }
                    ChannelHome home = found.get();
                    if (home.node().equals(directory.localNode())) {
                        NamedChannel here = registry.named(name);
                        if (here == null) {
                            if (home.incarnation().equals(directory.localIncarnation())) {
                                throw new NotFoundException("channel", name); // made or deleted a moment ago
                            }
                            throw GoneException.channelLost(name, "channel '" + name + "' is lost: it lived on this node before it restarted");
                        }
                        t = new Target(here, null);
                    } else {
                        t = new Target(null, home);
                    }
                    byName.put(name, t);
                }
                targets.add(t);
            }
            return targets;
        }).subscribeOn(Schedulers.boundedElastic());
    }

    private Mono<Outcome> rounds(List<Case> cases, List<Target> targets, Duration timeout) {
        if (targets.stream().allMatch(t -> t.local() != null)) {
            // every channel turned out to live here (made between two looks): the runtime's select
            return selectHere(cases, targets.stream().map(Target::local).toArray(NamedChannel[]::new), timeout);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        return round(cases, targets, deadline, 0);
    }

    /** One round, then (if nothing fired) a back-off and the next, until the deadline or shutdown. */
    private Mono<Outcome> round(List<Case> cases, List<Target> targets, long deadline, int lap) {
        return Mono.defer(() -> {
            if (shutdown.reached(ServiceShutdown.State.DRAINING)) {
                return Mono.just(Outcome.none("shutdown"));
            }
            int[] order = permutation(cases.size());
            return attemptFrom(cases, targets, order, 0).switchIfEmpty(Mono.defer(() -> {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Mono.just(Outcome.none("timeout"));
                }
                long pause = Math.min(Math.min(MAX_BACK_OFF_MS, FIRST_BACK_OFF_MS << Math.min(lap, 20)), Math.max(1, left / 1_000_000));
                return Mono.delay(Duration.ofMillis(pause)).then(round(cases, targets, deadline, lap + 1));
            }));
        });
    }

    /** The attempts of a round from {@code order[k]} on, one at a time: the first that fires ends the round. */
    private Mono<Outcome> attemptFrom(List<Case> cases, List<Target> targets, int[] order, int k) {
        if (k == order.length) {
            return Mono.empty();
        }
        int i = order[k];
        return attempt(i, cases.get(i), targets.get(i)).switchIfEmpty(Mono.defer(() -> attemptFrom(cases, targets, order, k + 1)));
    }

    /**
     * One case tried without blocking: its outcome if it fired, empty if it could not proceed now
     * (and then nothing was taken or delivered).
     */
    private Mono<Outcome> attempt(int index, Case c, Target t) {
        if (t.local() != null) {
            return Mono.fromCallable(() -> tryHere(index, c, t.local()));
        }
        if (c.send()) {
            return forwarder.send(t.home(), c.value(), Duration.ZERO).flatMap(s -> s.sent() ? Mono.just(Outcome.sent(index)) : Mono.empty());
        }
        return forwarder.recv(t.home(), Duration.ZERO)
                .flatMap(r -> r.received() ? Mono.just(Outcome.received(index, r.value(), r.ok())) : Mono.empty());
    }

    /** A non-blocking send or receive on a channel of this node; null (empty) if it would block. */
    private static Outcome tryHere(int index, Case c, NamedChannel nc) {
        if (c.send()) {
            HeldValue held = HeldValue.offer(nc.share(), c.value());
            boolean sent;
            try {
                sent = nc.chan().trySend(held);
            } catch (ChanClosedException e) {
                held.withdraw();
                throw ConflictException.channelClosed(c.channel()).with("index", index);
            }
            if (sent) {
                held.buffered();
                return Outcome.sent(index);
            }
            held.withdraw();
            return null;
        }
        Received<Object> r = nc.chan().tryRecv();
        if (r == null) {
            return null;
        }
        return Outcome.received(index, r.ok() ? HeldValue.take(r.value()) : null, r.ok());
    }

    /** A uniformly random order of {@code n} cases (Fisher-Yates). */
    private static int[] permutation(int n) {
        int[] p = new int[n];
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        for (int i = 0; i < n; i++) {
            int j = rnd.nextInt(i + 1);
            p[i] = p[j];
            p[j] = i;
        }
        return p;
    }

    /** Emits "timeout" after {@code timeout}, or "shutdown" when the node starts draining. */
    private Mono<String> giveUpSignal(Duration timeout) {
        return Mono.firstWithValue(Mono.delay(timeout).thenReturn("timeout"), shutdown.draining().thenReturn("shutdown"));
    }

    /** The metric outcome of a failed select. */
    private static String failure(Throwable e) {
        return switch (e) {
            case NotFoundException nf -> "not_found";
            case ConflictException c when c.reason() == ConflictException.Reason.CHANNEL_CLOSED -> "closed";
            case GoneException lost -> "lost";
            case RefusedException r -> "refused";
            default -> "unavailable";
        };
    }
}
