package io.gosched.cluster.channel;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.gosched.service.budget.HeldValue;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.channel.spi.LocalChannels;
import io.gosched.service.channel.spi.LocalSelect;
import io.gosched.service.error.BackendUnavailableException;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.ServiceException;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.runtime.ChanClosedException;
import io.gosched.runtime.Received;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

/**
 * The home side of forwarded channel operations: runs each on the local {@code Chan} with the
 * caller's timeout and keeps its outcome, by request id, for as long as the caller may ask again.
 *
 * <h2>Exactly once</h2>
 * <ul>
 * <li>An operation runs once per request id; a retried request (its reply was lost) joins the
 *     running operation or gets the recorded outcome.</li>
 * <li>A timeout withdraws with {@code future.cancel(false)}: only when that wins is the answer
 *     {@code sent:false} / {@code received:false}; when it loses, the completed result stands, as
 *     in {@code ChannelService}.</li>
 * <li>A value a recv took is held as unconfirmed until the caller confirms it got the reply.
 *     A {@code return} (the caller's client went away), a caller that never confirms within
 *     {@link #retention}, or a value that arrives after the caller gave up: the value is put
 *     back into the channel, so it is never swallowed.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * Requests arrive on one NATS dispatcher thread and never block it: operations are the
 * channel's async futures; timeouts and the sweep run on one scheduler thread. Each
 * {@link Pending} is guarded by its own monitor.
 */
final class HomeServer implements AutoCloseable {

    private static final Log log = LogFactory.getLog(HomeServer.class);
    /** Channel states per page of a forwarded list. */
    static final int LIST_PAGE = 1000;

    /** Where an operation stands. */
    private enum Phase {
        /** Running on the channel. */
        RUNNING,
        /** Answered; nothing more to do but answer retries. */
        DONE,
        /** A recv answered with a value the caller has not confirmed yet. */
        UNCONFIRMED,
        /** The caller gave up or went away; a value that was or will be taken is put back. */
        RETURNED
    }

    /** One operation of one caller, by request id. Guarded by its monitor. */
    private final class Pending {
        final Forwarded.Request req;
        Phase phase = Phase.RUNNING;
        Forwarded.Reply reply;
        JsonNode taken;
        /** The channel {@link #taken} came from: the request's, or for a select the fired case's. */
        String takenFrom;
        long settledAt;
        CompletableFuture<?> op;
        ScheduledFuture<?> timer;
        final List<String> waiting = new ArrayList<>(1);

        Pending(Forwarded.Request req) {
            this.req = req;
        }

        synchronized void answerTo(String replyTo) {
            if (reply != null) {
                publish(replyTo, reply);
            } else if (replyTo != null) {
                waiting.add(replyTo);
            }
        }

        /** The operation finished with {@code r}; {@code value} is what a recv took, or null. */
        void settle(Forwarded.Reply r, JsonNode value) {
            settle(r, value, req.channel());
        }

        /** As {@link #settle(Forwarded.Reply, JsonNode)}, the value taken from channel {@code from}. */
        void settle(Forwarded.Reply r, JsonNode value, String from) {
            boolean putBack = false;
            synchronized (this) {
                if (phase != Phase.RUNNING) {
                    putBack = value != null; // the caller gave up first: the value goes back
                } else {
                    phase = value != null ? Phase.UNCONFIRMED : Phase.DONE;
                    reply = r;
                    taken = value;
                    takenFrom = from;
                    settledAt = System.nanoTime();
                    if (timer != null) {
                        timer.cancel(false);
                    }
                    for (String to : waiting) {
                        publish(to, r);
                    }
                    waiting.clear();
                }
            }
            if (putBack) {
                giveBack(from, value, "late");
            }
        }

        /**
         * The caller stops waiting (its node shuts down) and wants the outcome now: a running
         * send or recv is withdrawn if that still wins ({@code sent:false} / {@code received:false},
         * reason "shutdown"); one that completed meanwhile answers what it did. Executed only by
         * the dispatcher thread.
         */
        void withdraw(String replyTo) {
            CompletableFuture<?> f;
            synchronized (this) {
                f = phase == Phase.RUNNING ? op : null;
            }
            answerTo(replyTo); // the answer goes to this request too, whatever settles the operation
            if (f != null && f.cancel(false)) {
                settle(Forwarded.SEND.equals(req.op()) ? Forwarded.Reply.of(new ChannelOutcome.Send(false, "shutdown"))
                        : Forwarded.Reply.of(new ChannelOutcome.Recv(false, null, false, "shutdown")), null);
            }
            // cancel(false) lost: the operation completed, and its whenComplete settles and answers
        }

        void confirm() {
            synchronized (this) {
                if (phase == Phase.UNCONFIRMED) {
                    phase = Phase.DONE;
                    taken = null;
                }
            }
        }

        /** The caller gave up ({@code return}, {@code cancel}) or never confirmed. */
        void abandon(String why) {
            JsonNode back = null;
            String backTo = null;
            CompletableFuture<?> withdraw = null;
            synchronized (this) {
                switch (phase) {
                    case RUNNING -> withdraw = op;
                    case UNCONFIRMED -> {
                        back = taken;
                        backTo = takenFrom;
                    }
                    default -> {
                        return;
                    }
                }
                phase = Phase.RETURNED;
                taken = null;
                settledAt = System.nanoTime();
                // a retry that still comes gets "nothing happened", which is now true
                reply = !Forwarded.RECV.equals(req.op()) ? Forwarded.Reply.status(Forwarded.UNKNOWN)
                        : Forwarded.Reply.of(new ChannelOutcome.Recv(false, null, false, "withdrawn"));
                waiting.clear();
            }
            if (withdraw != null) {
                // cancel(false) true: nothing was taken or delivered. False: the operation
                // completed, and settle() (which must wait for our monitor) puts a taken value back.
                withdraw.cancel(false);
            }
            if (back != null) {
                giveBack(backTo, back, why);
            }
        }
    }

    private final ClusterConnection conn;
    private final LocalChannels local;
    private final LocalSelect selects;
    private final Duration retention;
    private final int maxPending;
    private final ConcurrentHashMap<String, Pending> outcomes = new ConcurrentHashMap<>();
    private final ScheduledThreadPoolExecutor timers;
    private final AtomicLong putBack = new AtomicLong();
    private final AtomicLong putBackFailed = new AtomicLong();
    private Dispatcher dispatcher;
    private volatile boolean closing;

    /**
     * @param selects     this node's selects, or null if it serves none
     * @param retention   how long an outcome is kept for retries and an unconfirmed value waits
     *                    for its confirmation: at least the callers' retry horizon
     * @param maxPending  outcomes held at once; beyond it requests are answered {@code busy} (503)
     */
    HomeServer(ClusterConnection conn, LocalChannels local, LocalSelect selects, Duration retention, int maxPending) {
        this.conn = conn;
        this.local = local;
        this.selects = selects;
        this.retention = retention;
        this.maxPending = maxPending;
        this.timers = new ScheduledThreadPoolExecutor(1, r -> Thread.ofPlatform().name("gosched-chan-home").daemon(true).unstarted(r));
        this.timers.setRemoveOnCancelPolicy(true);
    }

    void start() {
        dispatcher = conn.nats().createDispatcher(this::onMessage);
        dispatcher.subscribe(ClusterLayout.channelSubject(conn.nodeId()));
        long sweepMs = Math.max(50, retention.toMillis() / 10);
        timers.scheduleWithFixedDelay(this::sweep, sweepMs, sweepMs, TimeUnit.MILLISECONDS);
    }

    /** Executed only by the dispatcher thread. */
    private void onMessage(Message m) {
        Forwarded.Request req;
        try {
            req = Forwarded.request(m.getData());
        } catch (RuntimeException e) {
            log.debug("unreadable forwarded channel operation", e);
            return;
        }
        if (req.id() == null || req.op() == null || req.channel() == null) {
            return;
        }
        switch (req.op()) {
            case Forwarded.CONFIRM -> withPending(req.id(), Pending::confirm);
            case Forwarded.RETURN, Forwarded.CANCEL -> withPending(req.id(), p -> p.abandon("returned"));
            case Forwarded.WITHDRAW -> {
                Pending p = outcomes.get(req.id());
                if (p == null) {
                    publish(m.getReplyTo(), Forwarded.Reply.status(Forwarded.UNKNOWN)); // never arrived, or long forgotten
                } else {
                    p.withdraw(m.getReplyTo());
                }
            }
            case Forwarded.DESCRIBE -> publish(m.getReplyTo(), describe(req));
            case Forwarded.LIST -> publish(m.getReplyTo(), list(req));
            case Forwarded.SEND, Forwarded.RECV, Forwarded.SELECT, Forwarded.CLOSE, Forwarded.DELETE -> operate(req, m.getReplyTo());
            default -> log.debug("unknown forwarded channel op " + req.op());
        }
    }

    private void withPending(String id, java.util.function.Consumer<Pending> action) {
        Pending p = outcomes.get(id);
        if (p != null) {
            action.accept(p);
        }
    }

    private Forwarded.Reply describe(Forwarded.Request req) {
        if (!conn.incarnation().equals(req.incarnation())) {
            return Forwarded.Reply.status(Forwarded.LOST);
        }
        return local.describe(req.channel()).map(Forwarded.Reply::of).orElse(Forwarded.Reply.status(Forwarded.NOT_FOUND));
    }

    /**
     * A page of this node's channels: as many as fit well inside one message (the server's
     * {@code max_payload} is 1 MiB by default; a state is a few hundred bytes).
     */
    private Forwarded.Reply list(Forwarded.Request req) {
        if (!conn.incarnation().equals(req.incarnation())) {
            return Forwarded.Reply.status(Forwarded.LOST);
        }
        List<ChannelOutcome.State> page = local.list(req.after(), LIST_PAGE + 1);
        boolean more = page.size() > LIST_PAGE;
        return Forwarded.Reply.page(more ? page.subList(0, LIST_PAGE) : page, more);
    }

    private void operate(Forwarded.Request req, String replyTo) {
        if (!conn.incarnation().equals(req.incarnation())) {
            publish(replyTo, Forwarded.Reply.status(Forwarded.LOST)); // addressed to this node's previous life
            return;
        }
        Pending p = outcomes.get(req.id());
        boolean fresh = false;
        if (p == null) {
            if (closing || outcomes.size() >= maxPending) {
                publish(replyTo, Forwarded.Reply.status(Forwarded.BUSY));
                return;
            }
            Pending mine = new Pending(req);
            p = outcomes.putIfAbsent(req.id(), mine);
            if (p == null) {
                p = mine;
                fresh = true;
            }
        }
        p.answerTo(replyTo);
        if (fresh) {
            start(p);
        }
    }

    private void start(Pending p) {
        Forwarded.Request req = p.req;
        try {
            switch (req.op()) {
                case Forwarded.SEND -> startSend(p);
                case Forwarded.RECV -> startRecv(p);
                case Forwarded.DELETE -> startDelete(p);
                case Forwarded.SELECT -> startSelect(p);
                default -> {
                    local.close(req.channel());
                    p.settle(Forwarded.Reply.status(Forwarded.OK), null);
                }
            }
        } catch (ServiceException e) {
            p.settle(reply(e), null);
        }
    }

    /** The wire status of an operation the channel refused. */
    private static Forwarded.Reply reply(ServiceException e) {
        return switch (e) {
            case NotFoundException nf -> Forwarded.Reply.status(Forwarded.NOT_FOUND);
            case ConflictException c when c.reason() == ConflictException.Reason.CHANNEL_CLOSED -> Forwarded.Reply.status(Forwarded.CLOSED);
            // the memory budget (or the channel's share of it) has no room: nothing was kept
            case RefusedException r -> Forwarded.Reply.status(Forwarded.FULL, r.getMessage());
            default -> Forwarded.Reply.status(Forwarded.UNKNOWN);
        };
    }

    /** A delete removes the directory entry (a KV round trip): run off the dispatcher thread. */
    private void startDelete(Pending p) {
        Schedulers.boundedElastic().schedule(() -> {
            try {
                local.delete(p.req.channel());
                p.settle(Forwarded.Reply.status(Forwarded.OK), null);
            } catch (NotFoundException e) {
                p.settle(Forwarded.Reply.status(Forwarded.NOT_FOUND), null);
            } catch (BackendUnavailableException e) {
                p.settle(Forwarded.Reply.status(Forwarded.UNKNOWN, e.getMessage()), null);
            } catch (RuntimeException e) {
                log.warn("forwarded delete of '" + p.req.channel() + "' failed", e);
                p.settle(Forwarded.Reply.status(Forwarded.UNKNOWN), null);
            }
        });
    }

    private void startSend(Pending p) {
        CompletableFuture<Void> f = local.send(p.req.channel(), p.req.value() == null
                ? tools.jackson.databind.node.JsonNodeFactory.instance.nullNode() : p.req.value());
        arm(p, f, () -> Forwarded.Reply.of(new ChannelOutcome.Send(false, closing ? "shutdown" : "timeout")));
        f.whenComplete((v, e) -> {
            Throwable c = e instanceof CompletionException ? e.getCause() : e;
            if (c instanceof CancellationException) {
                return; // withdrawn: whoever withdrew answers
            }
            if (c instanceof ChanClosedException) {
                p.settle(Forwarded.Reply.status(Forwarded.CLOSED), null);
            } else if (c != null) {
                log.warn("forwarded send on '" + p.req.channel() + "' failed", c);
                p.settle(Forwarded.Reply.status(Forwarded.UNKNOWN), null);
            } else {
                p.settle(Forwarded.Reply.of(ChannelOutcome.Send.SENT), null);
            }
        });
    }

    /**
     * A select over channels of this node, as one select (the runtime's, through
     * {@link LocalSelect}): its stop is asynchronous, so the operation's handle never reports a
     * withdrawal ({@code cancel(false)} asks the select to stop and answers false); whatever the
     * select ends with, a case that fired or none, settles the operation, and a value it took
     * after the caller gave up goes back (see {@link Pending#settle}).
     */
    private void startSelect(Pending p) {
        LocalSelect s = selects;
        List<ChannelOutcome.SelectCase> in = p.req.cases();
        if (s == null || in == null || in.isEmpty()) {
            p.settle(Forwarded.Reply.status(Forwarded.UNKNOWN, "node " + conn.nodeId() + " serves no selects"), null);
            return;
        }
        List<ChannelOutcome.SelectCase> cases = in.stream().map(c -> c.send() && c.value() == null
                ? new ChannelOutcome.SelectCase(c.channel(), true, tools.jackson.databind.node.JsonNodeFactory.instance.nullNode()) : c).toList();
        LocalSelect.Running run;
        try {
            run = s.start(cases);
        } catch (NotFoundException nf) {
            p.settle(Forwarded.Reply.status(Forwarded.NOT_FOUND, nf.id()), null); // the reason names the channel
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(p.req.timeoutMs() == null ? 0 : Math.max(0, p.req.timeoutMs()));
        CompletableFuture<Void> handle = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                run.stop(System.nanoTime() - deadline >= 0 ? "timeout" : "shutdown");
                return false; // the select's own result says whether anything fired
            }
        };
        arm(p, handle, () -> Forwarded.Reply.status(Forwarded.UNKNOWN));
        run.result().whenComplete((sel, e) -> {
            Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (c instanceof ConflictException closed && closed.reason() == ConflictException.Reason.CHANNEL_CLOSED) {
                p.settle(Forwarded.Reply.status(Forwarded.CLOSED, String.valueOf(closed.members().get("channel"))), null);
            } else if (c instanceof ServiceException se) {
                p.settle(reply(se), null);
            } else if (c != null) {
                log.warn("forwarded select on '" + p.req.channel() + "' failed", c);
                p.settle(Forwarded.Reply.status(Forwarded.UNKNOWN), null);
            } else {
                boolean took = sel.tookValue(cases);
                p.settle(Forwarded.Reply.of(sel), took ? sel.value() : null, sel.fired() ? cases.get(sel.index()).channel() : null);
            }
        });
    }

    private void startRecv(Pending p) {
        CompletableFuture<Received<Object>> f = local.recv(p.req.channel());
        arm(p, f, () -> Forwarded.Reply.of(new ChannelOutcome.Recv(false, null, false, closing ? "shutdown" : "timeout")));
        f.whenComplete((r, e) -> {
            Throwable c = e instanceof CompletionException ? e.getCause() : e;
            if (c instanceof CancellationException) {
                return;
            }
            if (c != null) {
                log.warn("forwarded recv on '" + p.req.channel() + "' failed", c);
                p.settle(Forwarded.Reply.status(Forwarded.UNKNOWN), null);
                return;
            }
            // a value an HTTP sender or a forwarded one put in is a HeldValue: taking it out gives its bytes back
            JsonNode v = r.ok() ? HeldValue.take(r.value()) : null;
            p.settle(Forwarded.Reply.of(new ChannelOutcome.Recv(true, v, r.ok(), null)), r.ok() ? v : null);
        });
    }

    /** Withdraws the operation when its timeout passes; only a won withdrawal answers "not done". */
    private void arm(Pending p, CompletableFuture<?> f, java.util.function.Supplier<Forwarded.Reply> notDone) {
        synchronized (p) {
            p.op = f;
        }
        long ms = p.req.timeoutMs() == null ? 0 : Math.max(0, p.req.timeoutMs());
        Runnable giveUp = () -> {
            if (f.cancel(false)) {
                p.settle(notDone.get(), null);
            }
        };
        if (f.isDone()) {
            return;
        }
        if (ms == 0) {
            giveUp.run();
            return;
        }
        ScheduledFuture<?> t = timers.schedule(giveUp, ms, TimeUnit.MILLISECONDS);
        synchronized (p) {
            p.timer = t;
        }
    }

    /** Drops old outcomes and puts back values nobody confirmed. Executed only by the timer thread. */
    private void sweep() {
        long now = System.nanoTime();
        long keep = retention.toNanos();
        outcomes.forEach((id, p) -> {
            Phase phase;
            long settled;
            synchronized (p) {
                phase = p.phase;
                settled = p.settledAt;
            }
            if (phase == Phase.RUNNING || now - settled < keep) {
                return;
            }
            if (phase == Phase.UNCONFIRMED) {
                p.abandon("unconfirmed"); // the caller never confirmed: it did not get the value
                return; // dropped on a later sweep
            }
            outcomes.remove(id, p);
        });
    }

    private void giveBack(String channel, JsonNode value, String why) {
        if (local.putBack(channel, value)) {
            putBack.incrementAndGet();
            log.debug("put back a value of '" + channel + "' (" + why + ")");
        } else {
            putBackFailed.incrementAndGet();
            log.warn("a value taken from '" + channel + "' could not be put back (" + why + "): the channel is closed or gone");
        }
    }

    private void publish(String replyTo, Forwarded.Reply r) {
        if (replyTo == null) {
            return;
        }
        try {
            conn.nats().publish(replyTo, Forwarded.encode(r));
        } catch (IllegalStateException closed) {
            // the caller asks again, or gives up
        }
    }

    int pending() {
        return outcomes.size();
    }

    long valuesPutBack() {
        return putBack.get();
    }

    /** Stops taking requests and answers every running operation "shutdown" (withdrawn where possible). */
    @Override
    public void close() {
        closing = true;
        if (dispatcher != null) {
            try {
                dispatcher.unsubscribe(ClusterLayout.channelSubject(conn.nodeId()));
                conn.nats().closeDispatcher(dispatcher);
            } catch (RuntimeException e) {
                // connection already closed
            }
        }
        for (Pending p : outcomes.values()) {
            CompletableFuture<?> f;
            synchronized (p) {
                f = p.phase == Phase.RUNNING ? p.op : null;
            }
            if (f != null && f.cancel(false)) {
                p.settle(Forwarded.SEND.equals(p.req.op()) ? Forwarded.Reply.of(new ChannelOutcome.Send(false, "shutdown"))
                        : Forwarded.Reply.of(new ChannelOutcome.Recv(false, null, false, "shutdown")), null);
            }
        }
        timers.shutdownNow();
    }
}
