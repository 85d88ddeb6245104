package io.gosched.runtime;

import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Go's {@code select} statement over send and receive cases.
 *
 * <pre>{@code
 * Selected s = Select.select(Select.recv(in), Select.send(out, v));
 * switch (s.index()) { case 0 -> use(s.valueAs()); case 1 -> sent(); }
 * }</pre>
 *
 * <p>Semantics are Go's: among the cases that can proceed one is chosen uniformly at random; a case
 * with a null channel never proceeds; a send case on a closed channel throws
 * {@link ChanClosedException} when chosen (and a closed channel makes that case ready); a receive
 * case on a closed, drained channel proceeds with {@code ok == false}. {@link #select} blocks until
 * a case proceeds (with no usable case at all it blocks forever, like {@code select {}});
 * {@link #trySelect} returns index -1 instead of blocking (Go's {@code default}). A select may send
 * and receive on the same channel; it never pairs with itself.
 *
 * <p>Go: runtime/select.go
 */
public final class Select {
    /*
     * Implementation notes (selectgo).
     *
     * Poll order: a uniformly random permutation of the cases with a non-null channel (incremental
     * Fisher-Yates), so that the first ready case found is a uniform choice among the ready ones.
     * Lock order: the same cases sorted by Chan.id, a total order shared by every select (Go sorts by
     * hchan address). Duplicate channels are adjacent in lock order and locked once. Taking all the
     * locks of a select in one global order is what makes two selects on overlapping channels
     * deadlock-free.
     *
     * Pass 1 (all locked, poll order): the first case that can proceed now wins.
     * Pass 2 (all locked, lock order): a sudog per case (isSelect: wakers must win the selector's
     * selectDone, so at most one case ever fires), enqueued on each channel; park with
     * SEL_PARK_COMMIT, which unlocks every channel only after the G is waiting. A platform thread
     * unlocks and parks on its ThreadParker, which carries selectDone and param for it.
     * Pass 3 (all locked again, lock order): the sudog in param is the case that fired; every other
     * sudog is taken off its queue; selectDone is reset.
     *
     * A select never pairs its own send with its own receive: it pairs only in pass 1, before any of
     * its sudogs is queued, and by the time it queues them it holds every lock, so no pass-1 of its
     * own can run; once parked only other goroutines dequeue its sudogs.
     *
     * Allocation: pollorder and lockorder are two int arrays allocated per call (Go keeps them on the
     * stack; a per-carrier scratch array is not safe because the G may migrate while parked and pass
     * 3 still needs lockorder); sudogs come from the per-M cache (see Sudog "Allocation"); a chosen receive allocates
     * its Selected result (a send or default result does not, for the common shapes).
     */

    private Select() {
    }

    /** A receive case; {@code ch == null} never proceeds. */
    public static <T> SelectCase recv(Chan<T> ch) {
        return new SelectCase(ch, false, null);
    }

    /** A send case; {@code ch == null} never proceeds. Value must not be null. */
    public static <T> SelectCase send(Chan<T> ch, T value) {
        Objects.requireNonNull(value, "value");
        if (ch != null && ch.timer != null) {
            throw Chan.notForTimerChannels("send on");
        }
        return new SelectCase(ch, true, value);
    }

    /** Blocks until one case proceeds; returns its index and, for a receive, the value and ok. */
    public static Selected select(SelectCase... cases) {
        return selectgo(cases, true, WaitReason.SELECT);
    }

    /**
     * {@link #select(SelectCase...)} whose goroutine, while parked, shows {@code waitReason} in
     * goroutine dumps and traces instead of {@code "select"}: one of Go's strings, such as
     * {@code "chan receive"}, {@code "chan send"} or {@code "sleep"}. For a select that stands for
     * one operation to whoever reads a dump, as a receive that can also be cancelled through a
     * context, or a sleep that can. Go has no such call: its {@code time.Sleep} and channel
     * operations park with their own reasons, and the cancellable forms show "select".
     * In a synctest bubble the reason stays "select" ("select (durable)"), since whether a wait
     * is durable follows from its channels there, not from what the caller calls it.
     *
     * @throws IllegalArgumentException if waitReason is not one of Go's wait reasons
     */
    public static Selected select(String waitReason, SelectCase... cases) {
        return selectgo(cases, true, WaitReason.named(waitReason));
    }

    /** Proceeds with a ready case if there is one; otherwise returns index -1 (Go's default). */
    public static Selected trySelect(SelectCase... cases) {
        return selectgo(cases, false, WaitReason.SELECT);
    }

    /** Results shared by all send cases of small index (a send result carries no value). */
    private static final Selected[] SENT = new Selected[16];
    static {
        for (int i = 0; i < SENT.length; i++) {
            SENT[i] = new Selected(i, null, true);
        }
    }

    private static Selected sent(int i) {
        return i < SENT.length ? SENT[i] : new Selected(i, null, true);
    }

    /**
     * Go's selectgo. Can be called by any goroutine or thread holding no runtime lock.
     * Go: runtime/select.go selectgo
     */
    static Selected selectgo(SelectCase[] cases, boolean block, WaitReason reason) {
        G gp = Scheduler.getg();
        if (gp != null) {
            if (gp.status() == G.SYSCALL) {
                return Scheduler.syscallCallback(gp, () -> selectgo(cases, block, reason));
            }
            Scheduler.checkpoint(gp);
        }
        int ncases = cases.length;
        boolean durable = true; // every channel is a bubble's (see Bubble; only matters in one)
        int[] pollorder = new int[ncases];
        int norder = 0;

        // Generate permuted order, omitting cases with a nil channel.
        // Not ThreadLocalRandom inside a goroutine: it is keyed by Thread.currentThread(), which
        // may name the M this goroutine left (see M.current()); the P's own generator is not.
        P pp = gp != null && gp.m != null ? gp.m.p : null;
        ThreadLocalRandom rnd = pp == null ? ThreadLocalRandom.current() : null;
        for (int i = 0; i < ncases; i++) {
            SelectCase cas = cases[i];
            if (cas.c == null) {
                continue;
            }
            if (cas.c.bubble != null) {
                cas.c.checkBubble(gp, cas.isSend ? "send on" : "receive on");
            } else if (!cas.c.nilLike()) {
                durable = false; // a channel from outside the bubble can be readied from outside
            }
            if (cas.c.timer != null) {
                cas.c.timer.maybeRunChan(); // a due timer nobody waited on fires now (Go 1.23)
            }
            int j = pp != null ? pp.cheaprand() % (norder + 1) : rnd.nextInt(norder + 1); // cheaprandn(norder+1)
            pollorder[norder] = pollorder[j];
            pollorder[j] = i;
            norder++;
        }
        if (norder == 0) {
            if (!block) {
                return Selected.NONE;
            }
            blockForever(gp); // select {} or only nil channels
        }

        // Sort the cases by channel id to get the locking order. Insertion sort: selects are small;
        // Go's heap sort is there only to avoid allocation-free recursion limits, not for semantics.
        int[] lockorder = new int[norder];
        for (int i = 0; i < norder; i++) {
            int k = pollorder[i];
            long key = cases[k].c.id;
            int j = i;
            while (j > 0 && cases[lockorder[j - 1]].c.id > key) {
                lockorder[j] = lockorder[j - 1];
                j--;
            }
            lockorder[j] = k;
        }

        sellock(cases, lockorder, norder);

        // Pass 1: look for something already waiting.
        for (int i = 0; i < norder; i++) {
            int casi = pollorder[i];
            SelectCase cas = cases[casi];
            Chan<?> c = cas.c;
            if (cas.isSend) {
                Object sent = c.offerLocked(cas.elem);
                if (sent != null) {
                    selunlock(cases, lockorder, norder);
                    if (sent == Chan.SEND_CLOSED) {
                        throw new ChanClosedException("send on closed channel");
                    }
                    if (sent != Chan.BUFFERED) { // handed to a waiting receiver
                        ((Sudog) sent).ready(Scheduler.mFor(gp));
                    }
                    return sent(casi);
                }
            } else {
                Object got = c.takeLocked();
                if (got != Chan.WOULD_BLOCK) {
                    if (got instanceof Sudog sg) { // from a waiting sender
                        Object v = Chan.takenFrom(sg);
                        selunlock(cases, lockorder, norder);
                        sg.ready(Scheduler.mFor(gp));
                        return new Selected(casi, v, true);
                    }
                    selunlock(cases, lockorder, norder);
                    return got == Chan.CLOSED_EMPTY ? new Selected(casi, null, false) // read at end of closed channel
                            : new Selected(casi, got, true);
                }
            }
        }

        if (!block) {
            selunlock(cases, lockorder, norder);
            return Selected.NONE;
        }

        // Pass 2: enqueue on all channels, in lock order.
        Sudog.ThreadParker parker = gp == null ? Sudog.currentParker() : null;
        Sudog head = null;
        Sudog tail = null;
        for (int i = 0; i < norder; i++) {
            SelectCase cas = cases[lockorder[i]];
            Sudog sg = Sudog.acquireSudog();
            if (gp != null) {
                sg.g = gp;
            } else {
                sg.waiter = parker;
            }
            sg.isSelect = true;
            sg.elem = cas.isSend ? cas.elem : null;
            sg.c = cas.c;
            // Construct the waiting list in lock order.
            if (tail == null) {
                head = sg;
            } else {
                tail.waitlink = sg;
            }
            tail = sg;
            if (cas.isSend) {
                Chan.SENDQ.enqueue(cas.c, sg);
            } else {
                Chan.RECVQ.enqueue(cas.c, sg);
                if (cas.c.timer != null) {
                    cas.c.timer.blockChan(); // every lock held; undone in pass 3
                }
            }
        }

        Sudog sg1;
        if (gp != null) {
            gp.param = null;
            // The sudog list travels to the commit as its argument (Go reads it from gp.waiting).
            try {
                Scheduler.gopark(SEL_PARK_COMMIT, head, gp.bubble == null ? reason
                        : durable ? WaitReason.SYNCTEST_SELECT : WaitReason.SELECT);
            } catch (IllegalStateException pinned) {
                // Could not park (pinned goroutine): no commit ran, every lock is still held and no
                // waker saw the sudogs. Take them back off their queues, unlock, recycle.
                Sudog sg = head;
                for (int i = 0; i < norder; i++) {
                    SelectCase cas = cases[lockorder[i]];
                    Sudog next = sg.waitlink;
                    (cas.isSend ? Chan.SENDQ : Chan.RECVQ).dequeueSudoG(cas.c, sg);
                    if (!cas.isSend && cas.c.timer != null) {
                        cas.c.timer.unblockChan();
                    }
                    sg.waitlink = null;
                    Sudog.releaseSudog(sg);
                    sg = next;
                }
                selunlock(cases, lockorder, norder);
                throw pinned;
            }
            sg1 = (Sudog) gp.param;
            gp.param = null;
        } else {
            parker.param = null;
            selunlock(cases, lockorder, norder);
            sg1 = parker.park(cases);
        }

        // Pass 3: dequeue from unsuccessful channels. Otherwise they stack up on quiet channels.
        sellock(cases, lockorder, norder);
        if (gp != null) {
            gp.setSelectDone(0);
        } else {
            parker.selectDone = 0;
        }
        int casi = -1;
        boolean caseSuccess = false;
        Object recvValue = null;
        Sudog sglist = head;
        for (int i = 0; i < norder; i++) {
            int k = lockorder[i];
            SelectCase cas = cases[k];
            if (!cas.isSend && cas.c.timer != null) {
                cas.c.timer.unblockChan();
            }
            if (sglist == sg1) {
                // sg1 has already been dequeued by the G that woke us up.
                casi = k;
                caseSuccess = sglist.success;
                recvValue = sglist.elem;
            } else if (cas.isSend) {
                Chan.SENDQ.dequeueSudoG(cas.c, sglist);
            } else {
                Chan.RECVQ.dequeueSudoG(cas.c, sglist);
            }
            Sudog next = sglist.waitlink;
            sglist.waitlink = null;
            sglist.next = null; // sg1 is off its queue; losers were just unlinked
            sglist.prev = null;
            Sudog.releaseSudog(sglist);
            sglist = next;
        }
        selunlock(cases, lockorder, norder);
        if (casi < 0) {
            throw new IllegalStateException("selectgo: bad wakeup");
        }
        if (cases[casi].isSend) {
            if (!caseSuccess) {
                throw new ChanClosedException("send on closed channel");
            }
            return sent(casi);
        }
        return new Selected(casi, caseSuccess ? recvValue : null, caseSuccess);
    }

    /** Locks each distinct channel once, in lock order. Go: runtime/select.go sellock */
    private static void sellock(SelectCase[] cases, int[] lockorder, int n) {
        Chan<?> c = null;
        for (int i = 0; i < n; i++) {
            Chan<?> c0 = cases[lockorder[i]].c;
            if (c0 != c) {
                c = c0;
                c.lock();
            }
        }
    }

    /**
     * Unlocks in reverse lock order. A channel can appear twice or more (adjacent in lock order):
     * unlock it only at its first occurrence when walking backwards.
     * Go: runtime/select.go selunlock
     */
    private static void selunlock(SelectCase[] cases, int[] lockorder, int n) {
        for (int i = n - 1; i >= 0; i--) {
            Chan<?> c = cases[lockorder[i]].c;
            if (i > 0 && c == cases[lockorder[i - 1]].c) {
                continue; // will unlock it on the next iteration
            }
            c.unlock();
        }
    }

    /**
     * Unlocks every channel of the select after the G is waiting. Walks the sudogs (in lock order)
     * and unlocks a channel only once past its last sudog. This must not touch a sudog after the
     * last unlock: the woken G's pass 3 re-locks every channel before it recycles the sudogs, so
     * until the last lock is released the list is stable, and after it the G may be running.
     * Go: runtime/select.go selparkcommit
     */
    private static final ParkCommit SEL_PARK_COMMIT = (gp, first) -> {
        Chan<?> lastc = null;
        for (Sudog sg = (Sudog) first; sg != null; sg = sg.waitlink) {
            Chan<?> c = (Chan<?>) sg.c;
            if (c != lastc && lastc != null) {
                lastc.unlock();
            }
            lastc = c;
        }
        if (lastc != null) {
            lastc.unlock();
        }
        return true;
    };

    private static final ParkCommit PARK_FOREVER = (gp, arg) -> true;

    /** {@code select {}}: never returns. Go: runtime/select.go block */
    private static void blockForever(G gp) {
        if (gp != null) {
            for (;;) {
                Scheduler.gopark(PARK_FOREVER, null, WaitReason.SELECT_NO_CASES);
            }
        }
        for (;;) {
            LockSupport.park(Select.class);
        }
    }
}
