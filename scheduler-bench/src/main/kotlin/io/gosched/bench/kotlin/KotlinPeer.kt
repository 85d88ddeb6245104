package io.gosched.bench.kotlin

import io.gosched.bench.Footprint
import io.gosched.bench.HogState
import io.gosched.bench.Measures
import io.gosched.bench.Peer
import io.gosched.bench.Result
import io.gosched.bench.BenchWorkload
import java.util.concurrent.atomic.AtomicLong
import kotlin.time.Duration.Companion.nanoseconds
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.selects.select
import kotlinx.coroutines.yield

/**
 * The workloads as idiomatic Kotlin coroutines on [Dispatchers.Default] (its size is the
 * `kotlinx.coroutines.scheduler.core.pool.size` system property), with [Channel] for channels
 * and structured concurrency ([coroutineScope]) for WaitGroups.
 */
class KotlinPeer : Peer {
    override fun name() = "kotlin"

    override fun version() =
        "Kotlin ${KotlinVersion.CURRENT}, kotlinx-coroutines ${coroutinesVersion()}, Dispatchers.Default core pool " +
            System.getProperty("kotlinx.coroutines.scheduler.core.pool.size", "default")

    private fun coroutinesVersion(): String =
        Channel::class.java.getResourceAsStream("/META-INF/kotlinx_coroutines_core.version")
            ?.use { it.readBytes().decodeToString().trim() } ?: "unknown"

    /** The "main goroutine": the body runs on Dispatchers.Default, the calling thread waits. */
    private fun main(body: suspend CoroutineScope.() -> Result): Result = runBlocking(Dispatchers.Default) { body() }

    override fun spawn(n: Long): Result = main {
        val counter = AtomicLong()
        val t0 = System.nanoTime()
        coroutineScope {
            for (i in 0 until n) launch { counter.incrementAndGet() }
        }
        Result.perOp(counter.get(), System.nanoTime() - t0, n, "ns_op")
    }

    override fun pingpong(n: Long): Result = main {
        val ping = Channel<Long>()
        val pong = Channel<Long>()
        val t0 = System.nanoTime()
        launch { for (i in 0 until n) pong.send(ping.receive() + 1) }
        var sum = 0L
        for (i in 0 until n) {
            ping.send(i)
            sum += pong.receive()
        }
        Result.perOp(sum, System.nanoTime() - t0, n, "ns_op")
    }

    override fun prodcons(n: Long, capacity: Int): Result = main {
        val parties = BenchWorkload.PARALLEL_PARTIES
        val per = n / parties
        val ch = Channel<Long>(capacity)
        val sum = AtomicLong()
        val t0 = System.nanoTime()
        coroutineScope {
            repeat(parties) {
                launch {
                    var s = 0L
                    for (v in ch) s += v
                    sum.addAndGet(s)
                }
            }
            coroutineScope {
                repeat(parties) { p ->
                    launch { for (i in 0 until per) ch.send(p * per + i) }
                }
            }
            ch.close()
        }
        Result.perOp(sum.get(), System.nanoTime() - t0, per * parties, "ns_op")
    }

    override fun chain(n: Long, traversals: Long): Result = main {
        val links = Array(n.toInt() + 1) { Channel<Long>() }
        for (i in 0 until n.toInt()) {
            val input = links[i]
            val output = links[i + 1]
            launch { for (t in 0 until traversals) output.send(input.receive() + 1) }
        }
        var sum = 0L
        val t0 = System.nanoTime()
        for (t in 0 until traversals) {
            links[0].send(0L)
            sum += links[n.toInt()].receive()
        }
        Result.perOp(sum, System.nanoTime() - t0, traversals, "us_op")
    }

    override fun forkjoin(n: Int): Result = main {
        val t0 = System.nanoTime()
        val f = fib(this, n)
        Result.perOp(f, System.nanoTime() - t0, 1, "ms")
    }

    private suspend fun fib(scope: CoroutineScope, n: Int): Long {
        if (n <= 2) return 1
        val c = Channel<Long>(1)
        scope.launch { c.send(fib(scope, n - 1)) }
        val y = fib(scope, n - 2)
        return c.receive() + y
    }

    override fun timers(n: Long, sleeps: Long): Result = main {
        val count = AtomicLong()
        val lateSum = AtomicLong()
        val lateMax = AtomicLong()
        val early = AtomicLong()
        val t0 = System.nanoTime()
        coroutineScope {
            for (i in 0 until n) {
                launch {
                    var mySum = 0L
                    var myMax = 0L
                    var myEarly = 0L
                    for (j in 0 until sleeps) {
                        val d = BenchWorkload.sleepMillis(i, j) * 1_000_000
                        val s = System.nanoTime()
                        delay(d / 1_000_000)
                        val late = System.nanoTime() - s - d
                        if (late < 0) myEarly++
                        mySum += maxOf(0L, late)
                        myMax = maxOf(myMax, late)
                    }
                    count.addAndGet(sleeps)
                    lateSum.addAndGet(mySum)
                    lateMax.accumulateAndGet(myMax, Math::max)
                    early.addAndGet(myEarly)
                }
            }
        }
        Measures.timers(count.get(), System.nanoTime() - t0, lateSum.get(), lateMax.get(), early.get())
    }

    override fun hog(millis: Long): Result = main {
        val st = HogState()
        val gaps = LongArray((millis * 2 + 16).toInt())
        var gapCount = 0
        // The ticker is "created" before the hogs start: starvation before its first tick counts.
        var prev = System.nanoTime()
        var next = prev + BenchWorkload.HOG_TICK_NANOS
        val hogs = List(2) { h -> launch { st.iterations[h] = HogState.spin(st) } }
        Measures.hogStopper(millis) { st.stop = true }
        // The main coroutine is the ticker: fixed rate like Go's; delay rounds up to whole ms.
        while (true) {
            var now = System.nanoTime()
            while (now < next) {
                delay((next - now).nanoseconds)
                now = System.nanoTime()
            }
            if (gapCount < gaps.size) gaps[gapCount++] = now - prev
            prev = now
            if (st.stop) break
            do next += BenchWorkload.HOG_TICK_NANOS while (next <= now)
        }
        hogs.forEach { it.join() }
        Measures.hog(millis, gaps, gapCount, st.iterations[0], st.iterations[1])
    }

    override fun select(n: Long): Result = main {
        val parties = BenchWorkload.PARALLEL_PARTIES
        val per = n / parties
        val chans = Array(parties) { Channel<Long>() }
        val t0 = System.nanoTime()
        for (k in 0 until parties) {
            val ch = chans[k]
            launch { for (i in 0 until per) ch.send(k * per + i) }
        }
        var sum = 0L
        val total = per * parties
        for (i in 0 until total) {
            sum += select<Long> {
                chans[0].onReceive { it }
                chans[1].onReceive { it }
                chans[2].onReceive { it }
                chans[3].onReceive { it }
            }
        }
        Result.perOp(sum, System.nanoTime() - t0, total, "ns_op")
    }

    override fun gosched(n: Long): Result = main {
        val yields = AtomicLong()
        val t0 = System.nanoTime()
        coroutineScope {
            repeat(2) {
                launch {
                    for (i in 0 until n) yield()
                    yields.addAndGet(n)
                }
            }
        }
        Result.perOp(yields.get(), System.nanoTime() - t0, n, "ns_op")
    }

    /**
     * Each coroutine suspended in [Channel.receive] on its own rendezvous channel, children of one
     * scope (as [Measures.parkedRun] does for the Java peers, spelled out with suspending calls).
     */
    override fun parked(n: Long, warmup: Long): Result = main {
        val rss0 = Footprint.settle().rssBytes()
        repeat(Measures.PARKED_WARMUP_PASSES) { parkAll(warmup) {} }
        val base = Footprint.settle()
        lateinit var after: Footprint.Snapshot
        val sum = parkAll(n) { after = Footprint.settle() }
        Measures.parked(n, Footprint.Snapshot(base.heapBytes(), rss0), after, sum)
    }

    private suspend fun parkAll(n: Long, whileParked: () -> Unit): Long {
        val chans = arrayOfNulls<Channel<Long>>(n.toInt())
        val ready = AtomicLong()
        val sum = AtomicLong()
        coroutineScope {
            for (i in 0 until n.toInt()) {
                val c = Channel<Long>()
                chans[i] = c
                launch {
                    ready.incrementAndGet()
                    sum.addAndGet(c.receive())
                }
            }
            while (ready.get() < n) delay(1)
            delay(50) // the last to count are a few instructions from suspending
            whileParked()
            for (i in 0 until n.toInt()) chans[i]!!.send(i.toLong())
        }
        return sum.get()
    }

    /**
     * The receiver suspended in [Channel.receive] on a rendezvous channel, woken by [Channel.trySend]
     * from a platform thread (it succeeds only when a receiver waits; one that finds none is tried
     * again after another gap).
     */
    override fun wakeup(n: Long): Result = main {
        val ch = Channel<Long>()
        val latency = LongArray(n.toInt())
        val received = AtomicLong()
        val receiver = launch {
            for (i in 0 until n.toInt()) {
                val sent = ch.receive()
                latency[i] = System.nanoTime() - sent
                received.set(i + 1L)
            }
        }
        val missed = LongArray(1)
        val sender = Thread.ofPlatform().name("wakeup-sender").start {
            missed[0] = Measures.driveWakeups(n, received::get, { t -> ch.trySend(t).isSuccess }, true)
        }
        receiver.join() // the main coroutine suspends too: every Default thread is idle between sends
        sender.join()
        Measures.wakeup(latency, n.toInt(), missed[0])
    }
}
