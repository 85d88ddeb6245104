package io.gosched.service.channel;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
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
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.channel.spi.LocalSelect;
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
 * answer is its result turned into a {@link Mono}. A receive that fired after its client went
 * away puts the value back (possibly out of order), as the single receive does; a send that fired
 * was delivered and stands, as the single send's does. The same select serves the other nodes'
 * selects over this node's channels ({@link LocalSelect}).
 *
 * <h2>On one other node: forwarded as one select</h2>
 * In a cluster, a select whose channels all live on one other node is carried there as one call
 * ({@link ChannelForwarder#select}) and runs as above on that node, with the forwarding's
 * exactly-once rules (a value taken for a caller that went away goes back).
 *
 * <h2>Across nodes: rounds of non-blocking attempts</h2>
 * A select whose channels live on several nodes cannot park on all of them at once: there is no
 * atomic select across nodes. It runs as rounds: each round tries every case once, in a fresh
 * uniformly random order, without blocking (a local {@code trySend}/{@code tryRecv}, or a
 * forwarded send or receive with a zero timeout, which the home withdraws at once if it cannot
 * complete); the first attempt that succeeds ends the select, and since attempts run one at a
 * time and a failed attempt changes nothing, exactly one case fires. Between rounds the select
 * backs off ({@value #FIRST_BACK_OFF_MS} ms doubling to {@value #MAX_BACK_OFF_MS} ms) until its
 * deadline. Departures from Go, in docs/cluster.md: a case that becomes ready during a back-off is
 * seen only at the next round (latency up to the back-off), a partner that is itself waiting in
 * such a cross-node select is never paired with it (two of them never meet; a blocked single
 * operation, a buffered value or a one-node select does), and the choice is uniform only among
 * the cases ready throughout a round.
 *
 * <p>Limits as the single operations': one place of {@code max-pending-channel-calls} for the
 * whole select (forced past a full memory budget when it only receives), each send's value
 * charged to its channel's share while it waits (429 when it does not fit, before anything is
 * kept). Thread-safe.
 */
public final class ChannelSelect implements LocalSelect {

    /**
     * The answer: the {@code index} of the case that fired with, for a receive, its {@code value}
     * and Go's {@code ok} ({@code ok} false: the channel is closed and drained, the value null);
     * or {@code timedOut} with a {@code reason} ("timeout", "shutdown") when none fired.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Outcome(Integer index, JsonNode value, Boolean ok, Boolean timedOut, String reason) {

        static Outcome of(List<ChannelOutcome.SelectCase> cases, ChannelOutcome.Select s) {
            if (!s.fired()) {
                return new Outcome(null, null, null, true, s.reason());
            }
            if (cases.get(s.index()).send()) {
                return new Outcome(s.index(), null, null, null, null);
            }
            return new Outcome(s.index(), s.ok() && s.value() != null ? s.value() : NullNode.getInstance(), s.ok(), null, null);
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
    public Mono<Outcome> select(List<ChannelOutcome.SelectCase> cases, Duration timeout) {
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
        boolean freeing = cases.stream().noneMatch(ChannelOutcome.SelectCase::send); // only receives: frees bytes, as a receive does
        Mono<Outcome> answer = allLocal ? calls.guard(Mono.defer(() -> selectHere(cases, local, timeout)), freeing)
                : homes(cases, local).flatMap(targets -> calls.guard(Mono.defer(() -> elsewhere(cases, targets, timeout)), freeing));
        return answer
                .doOnSuccess(o -> metrics.channelOp("select", o == null ? "gone" : o.fired() ? "ok" : o.reason()))
                .doOnError(e -> metrics.channelOp("select", failure(e)));
    }

    // ---------------------------------------------------------------- every channel here: the runtime's select

    /** A select over channels of this node for another node; see {@link LocalSelect}. */
    @Override
    public Running start(List<ChannelOutcome.SelectCase> cases) {
        // No refuseNewWork here: a forwarded send or receive runs on a draining home too, until
        // its HomeServer closes and stops every running operation ("shutdown").
        NamedChannel[] chans = new NamedChannel[cases.size()];
        for (int i = 0; i < chans.length; i++) {
            chans[i] = registry.get(cases.get(i).channel()); // not found if it does not live here
        }
        return startHere(cases, chans, true);
    }

    /** One select on this node's channels: its result and its stop. */
    private record Here(CompletableFuture<ChannelOutcome.Select> result, Chan<Object> stopCase, AtomicReference<String> why)
            implements Running {

        @Override
        public void stop(String reason) {
            why.compareAndSet(null, reason);
            if (stopCase == null) {
                return; // settled on the caller's thread: nothing waits
            }
            try {
                stopCase.close(); // the stop case becomes ready: the select ends, by it or by a case that beat it
            } catch (ChanClosedException alreadyClosed) {
                // stopped once already
            }
        }
    }

    /**
     * Starts the runtime's select over {@code cases} on {@code chans}: fired at once on this
     * thread if a case is ready (or, without {@code block}, settled as "timeout" if none is), else
     * by a goroutine until a case fires or {@link Running#stop}. A receive's value is out of its
     * channel and its budget in the result; each send's value is charged while the select waits
     * and stays charged (to its channel) only for the case that fired.
     */
    private Here startHere(List<ChannelOutcome.SelectCase> cases, NamedChannel[] chans, boolean block) {
        int n = cases.size();
        HeldValue[] held = new HeldValue[n];
        SelectCase[] sc = new SelectCase[n + 1];
        try {
            for (int i = 0; i < n; i++) {
                ChannelOutcome.SelectCase c = cases.get(i);
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
        AtomicReference<String> why = new AtomicReference<>();
        CompletableFuture<ChannelOutcome.Select> result = new CompletableFuture<>();
        // Fast path: a ready case fires on this thread; trySelect parks nobody.
        Selected now;
        try {
            now = Select.trySelect(Arrays.copyOf(sc, n));
        } catch (ChanClosedException e) {
            settle(held, -1);
            result.completeExceptionally(closedSend(cases, chans));
            return new Here(result, null, why);
        }
        if (now.index() >= 0 || !block) {
            settle(held, now.index());
            result.complete(now.index() >= 0 ? taken(cases, now) : new ChannelOutcome.Select(null, null, false, "timeout"));
            return new Here(result, null, why);
        }

        Chan<Object> stop = Chan.make();
        sc[n] = Select.recv(stop);
        try {
            runtime.go(() -> {
                try {
                    Selected s = Select.select(sc);
                    settle(held, s.index());
                    result.complete(s.index() == n ? new ChannelOutcome.Select(null, null, false, why.get()) : taken(cases, s));
                } catch (ChanClosedException e) {
                    settle(held, -1);
                    result.completeExceptionally(closedSend(cases, chans));
                } catch (Throwable t) { // never out of the goroutine: an uncaught exception would end the runtime
                    settle(held, -1);
                    result.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException stopping) { // the runtime shuts down
            settle(held, -1);
            throw new ShuttingDownException();
        }
        return new Here(result, stop, why);
    }

    /** The HTTP select over this node's channels: {@link #startHere} ended by the timeout, shutdown or the client. */
    private Mono<Outcome> selectHere(List<ChannelOutcome.SelectCase> cases, NamedChannel[] chans, Duration timeout) {
        Here run = startHere(cases, chans, !timeout.isZero());
        if (run.result().isDone()) {
            return Mono.fromFuture(run.result()).map(s -> Outcome.of(cases, s));
        }
        // A value a receive case took goes out as the answer, or back because the client went
        // away first (AnswerOrGone): never both.
        Disposable[] timer = new Disposable[1];
        return AnswerOrGone.of(Mono.fromFuture(run.result(), true), () -> {
                    // The client went away: end the wait; a receive that fired meanwhile puts its value back.
                    run.stop("gone");
                    run.result().thenAccept(s -> {
                        if (s.tookValue(cases)) {
                            String name = cases.get(s.index()).channel();
                            boolean back = registry.putBack(name, s.value());
                            metrics.channelOp("select", back ? "requeued" : "lost");
                        }
                    });
                })
                .map(s -> Outcome.of(cases, s))
                .doOnSubscribe(sub -> timer[0] = giveUpSignal(timeout).subscribe(run::stop))
                .doFinally(signal -> {
                    if (timer[0] != null) {
                        timer[0].dispose();
                    }
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

    /** The case that fired; a receive's value taken out of the channel's budget. */
    private static ChannelOutcome.Select taken(List<ChannelOutcome.SelectCase> cases, Selected s) {
        if (cases.get(s.index()).send()) {
            return new ChannelOutcome.Select(s.index(), null, true, null);
        }
        return new ChannelOutcome.Select(s.index(), s.ok() ? HeldValue.take(s.value()) : null, s.ok(), null);
    }

    /**
     * The 409 of a send case on a closed channel that fired (Go panics: "send on closed channel").
     * The runtime does not say which case; a channel stays closed once closed, so the send cases
     * whose channel is closed now are the candidates, the first of them named.
     */
    private static ServiceException closedSend(List<ChannelOutcome.SelectCase> cases, NamedChannel[] chans) {
        for (int i = 0; i < cases.size(); i++) {
            if (cases.get(i).send() && chans[i] != null && chans[i].chan().isClosed()) {
                return ConflictException.channelClosed(cases.get(i).channel()).with("index", i);
            }
        }
        return ConflictException.channelClosed(cases.stream().filter(ChannelOutcome.SelectCase::send)
                .map(ChannelOutcome.SelectCase::channel).findFirst().orElse("?"));
    }

    // ---------------------------------------------------------------- channels on other nodes

    /** Where one case's channel lives: here ({@code local}) or on {@code home}. */
    private record Target(NamedChannel local, ChannelHome home) {}

    /**
     * The home of every case's channel, looked up once (off the caller's thread: the directory may
     * block): not found when no node has one, lost when it names this node's previous life.
     */
    private Mono<List<Target>> homes(List<ChannelOutcome.SelectCase> cases, NamedChannel[] local) {
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

    /** Every channel here (made between two looks), all on one other node, or spread: see the class comment. */
    private Mono<Outcome> elsewhere(List<ChannelOutcome.SelectCase> cases, List<Target> targets, Duration timeout) {
        if (targets.stream().allMatch(t -> t.local() != null)) {
            return selectHere(cases, targets.stream().map(Target::local).toArray(NamedChannel[]::new), timeout);
        }
        ChannelHome first = targets.getFirst().home();
        boolean oneHome = first != null && targets.stream().allMatch(t -> t.home() != null
                && t.home().node().equals(first.node()) && t.home().incarnation().equals(first.incarnation()));
        if (oneHome) {
            return forwarder.select(first, cases, timeout).map(s -> Outcome.of(cases, s));
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        return round(cases, targets, deadline, 0);
    }

    /** One round, then (if nothing fired) a back-off and the next, until the deadline or shutdown. */
    private Mono<Outcome> round(List<ChannelOutcome.SelectCase> cases, List<Target> targets, long deadline, int lap) {
        return Mono.defer(() -> {
            if (shutdown.reached(ServiceShutdown.State.DRAINING)) {
                return Mono.just(new Outcome(null, null, null, true, "shutdown"));
            }
            int[] order = permutation(cases.size());
            return attemptFrom(cases, targets, order, 0).switchIfEmpty(Mono.defer(() -> {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return Mono.just(new Outcome(null, null, null, true, "timeout"));
                }
                long pause = Math.min(Math.min(MAX_BACK_OFF_MS, FIRST_BACK_OFF_MS << Math.min(lap, 20)), Math.max(1, left / 1_000_000));
                return Mono.delay(Duration.ofMillis(pause)).then(round(cases, targets, deadline, lap + 1));
            }));
        });
    }

    /** The attempts of a round from {@code order[k]} on, one at a time: the first that fires ends the round. */
    private Mono<Outcome> attemptFrom(List<ChannelOutcome.SelectCase> cases, List<Target> targets, int[] order, int k) {
        if (k == order.length) {
            return Mono.empty();
        }
        int i = order[k];
        return attempt(i, cases, targets.get(i)).switchIfEmpty(Mono.defer(() -> attemptFrom(cases, targets, order, k + 1)));
    }

    /**
     * One case tried without blocking: its outcome if it fired, empty if it could not proceed now
     * (and then nothing was taken or delivered).
     */
    private Mono<Outcome> attempt(int index, List<ChannelOutcome.SelectCase> cases, Target t) {
        ChannelOutcome.SelectCase c = cases.get(index);
        if (t.local() != null) {
            return Mono.fromCallable(() -> tryHere(index, c, t.local())).map(s -> Outcome.of(cases, s));
        }
        if (c.send()) {
            return forwarder.send(t.home(), c.value(), Duration.ZERO)
                    .flatMap(s -> s.sent() ? Mono.just(Outcome.of(cases, new ChannelOutcome.Select(index, null, true, null))) : Mono.empty());
        }
        return forwarder.recv(t.home(), Duration.ZERO).flatMap(r -> r.received()
                ? Mono.just(Outcome.of(cases, new ChannelOutcome.Select(index, r.value(), r.ok(), null))) : Mono.empty());
    }

    /** A non-blocking send or receive on a channel of this node; null (empty) if it would block. */
    private static ChannelOutcome.Select tryHere(int index, ChannelOutcome.SelectCase c, NamedChannel nc) {
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
                return new ChannelOutcome.Select(index, null, true, null);
            }
            held.withdraw();
            return null;
        }
        Received<Object> r = nc.chan().tryRecv();
        if (r == null) {
            return null;
        }
        return new ChannelOutcome.Select(index, r.ok() ? HeldValue.take(r.value()) : null, r.ok(), null);
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
