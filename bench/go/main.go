// Command bench is the Go peer of gosched's comparison harness (bench/compare.sh).
//
// It runs the same workloads as the JVM peers (scheduler-bench, io.gosched.bench.Workload) and
// speaks the same line protocol on stdin/stdout:
//
//	peer   -> HELLO <version text>
//	driver -> RUN <workload> <n> <m>     peer -> OK check=C metric=v ... | ERR <message>
//	driver -> QUIT
//
// GOMAXPROCS comes from the environment (the driver sets it). Each workload returns a check value
// the driver compares with the expected one, so a broken run cannot look fast.
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	parties     = 4                // producers/consumers of prodcons, senders of select
	hogTick     = time.Millisecond // the hog workload's ticker period
	timersMaxMs = 50
)

type result struct {
	check   int64
	metrics []string // "name=value", in order
}

func perOp(check int64, elapsed time.Duration, ops int64, metric string) result {
	v := float64(elapsed.Nanoseconds()) / float64(ops)
	switch metric {
	case "us_op":
		v /= 1e3
	case "ms":
		v /= 1e6
	}
	return result{check, []string{metric + "=" + strconv.FormatFloat(v, 'g', -1, 64)}}
}

func spawn(n int64) result {
	var counter int64
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(int(n))
	for i := int64(0); i < n; i++ {
		go func() {
			atomic.AddInt64(&counter, 1)
			wg.Done()
		}()
	}
	wg.Wait()
	return perOp(atomic.LoadInt64(&counter), time.Since(t0), n, "ns_op")
}

func pingpong(n int64) result {
	ping, pong := make(chan int64), make(chan int64)
	t0 := time.Now()
	go func() {
		for i := int64(0); i < n; i++ {
			pong <- (<-ping) + 1
		}
	}()
	var sum int64
	for i := int64(0); i < n; i++ {
		ping <- i
		sum += <-pong
	}
	return perOp(sum, time.Since(t0), n, "ns_op")
}

func prodcons(n int64, capacity int) result {
	per := n / parties
	ch := make(chan int64, capacity)
	var sum int64
	var produced, consumed sync.WaitGroup
	t0 := time.Now()
	consumed.Add(parties)
	for c := 0; c < parties; c++ {
		go func() {
			var s int64
			for v := range ch {
				s += v
			}
			atomic.AddInt64(&sum, s)
			consumed.Done()
		}()
	}
	produced.Add(parties)
	for p := int64(0); p < parties; p++ {
		base := p * per
		go func() {
			for i := int64(0); i < per; i++ {
				ch <- base + i
			}
			produced.Done()
		}()
	}
	produced.Wait()
	close(ch)
	consumed.Wait()
	return perOp(atomic.LoadInt64(&sum), time.Since(t0), per*parties, "ns_op")
}

func chain(n, traversals int64) result {
	links := make([]chan int64, n+1)
	for i := range links {
		links[i] = make(chan int64)
	}
	for i := int64(0); i < n; i++ {
		in, out := links[i], links[i+1]
		go func() {
			for t := int64(0); t < traversals; t++ {
				out <- (<-in) + 1
			}
		}()
	}
	var sum int64
	t0 := time.Now()
	for t := int64(0); t < traversals; t++ {
		links[0] <- 0
		sum += <-links[n]
	}
	return perOp(sum, time.Since(t0), traversals, "us_op")
}

func fib(n int64) int64 {
	if n <= 2 {
		return 1
	}
	c := make(chan int64, 1)
	go func() { c <- fib(n - 1) }()
	y := fib(n - 2)
	return <-c + y
}

func forkjoin(n int64) result {
	t0 := time.Now()
	f := fib(n)
	return perOp(f, time.Since(t0), 1, "ms")
}

// sleepMillis is io.gosched.bench.Workload.sleepMillis: the same 1..50 ms for every peer.
func sleepMillis(i, j int64) int64 {
	h := uint64(i*3+j+1) * 0x9E3779B97F4A7C15
	h ^= h >> 32
	return 1 + int64(h%timersMaxMs)
}

func timers(n, sleeps int64) result {
	var count, lateSum, lateMax, early int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(int(n))
	for i := int64(0); i < n; i++ {
		id := i
		go func() {
			var mySum, myMax, myEarly int64
			for j := int64(0); j < sleeps; j++ {
				d := time.Duration(sleepMillis(id, j)) * time.Millisecond
				s := time.Now()
				time.Sleep(d)
				late := int64(time.Since(s) - d)
				if late < 0 {
					myEarly++
				} else {
					mySum += late
				}
				if late > myMax {
					myMax = late
				}
			}
			mu.Lock()
			count += sleeps
			lateSum += mySum
			early += myEarly
			if myMax > lateMax {
				lateMax = myMax
			}
			mu.Unlock()
			wg.Done()
		}()
	}
	wg.Wait()
	total := time.Since(t0)
	// check counts the sleeps that were not early (the JVM peers' rule, Measures.timers).
	return result{count - early, []string{
		fmt.Sprintf("total_ms=%g", float64(total.Nanoseconds())/1e6),
		fmt.Sprintf("late_ms=%g", float64(lateSum)/1e6/float64(count)),
		fmt.Sprintf("late_max_ms=%g", float64(lateMax)/1e6),
		fmt.Sprintf("early=%d", early),
	}}
}

// hogSpin is a tight loop with no function call: only Go's asynchronous preemption can stop it.
func hogSpin(stop *int32) int64 {
	var i int64
	for atomic.LoadInt32(stop) == 0 {
		i++
	}
	return i
}

func percentile(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return float64(sorted[rank-1])
}

func hog(millis int64) result {
	var stop int32
	var iterations [2]int64
	var wg sync.WaitGroup
	ticker := time.NewTicker(hogTick)
	prev := time.Now()
	wg.Add(2)
	for h := 0; h < 2; h++ {
		h := h
		go func() {
			iterations[h] = hogSpin(&stop)
			wg.Done()
		}()
	}
	time.AfterFunc(time.Duration(millis)*time.Millisecond, func() { atomic.StoreInt32(&stop, 1) })
	var late []int64
	var covered time.Duration
	for {
		<-ticker.C
		now := time.Now()
		covered += now.Sub(prev)
		l := int64(now.Sub(prev) - hogTick)
		if l < 0 {
			l = 0
		}
		late = append(late, l)
		prev = now
		if atomic.LoadInt32(&stop) != 0 {
			break
		}
	}
	ticker.Stop()
	wg.Wait()
	sort.Slice(late, func(a, b int) bool { return late[a] < late[b] })
	// Plausible (the JVM peers' rule, Measures.hog): the gaps cover the run, the ticker never
	// ticked faster than its period allows, the hogs ran.
	var check int64
	if len(late) > 0 && covered >= time.Duration(millis)*time.Millisecond &&
		int64(len(late)) <= int64(covered/hogTick)+2 && iterations[0]+iterations[1] > 0 {
		check = 1
	}
	return result{check, []string{
		fmt.Sprintf("p50_ms=%g", percentile(late, 0.50)/1e6),
		fmt.Sprintf("p99_ms=%g", percentile(late, 0.99)/1e6),
		fmt.Sprintf("max_ms=%g", float64(late[len(late)-1])/1e6),
		fmt.Sprintf("ticks=%d", len(late)),
	}}
}

func selectLoop(n int64) result {
	per := n / parties
	var chans [parties]chan int64
	for k := range chans {
		chans[k] = make(chan int64)
	}
	t0 := time.Now()
	for k := int64(0); k < parties; k++ {
		ch, base := chans[k], k*per
		go func() {
			for i := int64(0); i < per; i++ {
				ch <- base + i
			}
		}()
	}
	var sum int64
	total := per * parties
	for i := int64(0); i < total; i++ {
		select {
		case v := <-chans[0]:
			sum += v
		case v := <-chans[1]:
			sum += v
		case v := <-chans[2]:
			sum += v
		case v := <-chans[3]:
			sum += v
		}
	}
	return perOp(sum, time.Since(t0), total, "ns_op")
}

func gosched(n int64) result {
	var yields int64
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(2)
	for g := 0; g < 2; g++ {
		go func() {
			for i := int64(0); i < n; i++ {
				runtime.Gosched()
			}
			atomic.AddInt64(&yields, n)
			wg.Done()
		}()
	}
	wg.Wait()
	return perOp(atomic.LoadInt64(&yields), time.Since(t0), n, "ns_op")
}

// footprint is the parked workload's snapshot: HeapInuse+StackInuse after runtime.GC() (a
// goroutine's stack is not in the heap in Go, on the JVM it is), and the process's VmRSS.
func footprint() (heap, rss int64) {
	runtime.GC()
	runtime.GC() // the first may leave finalizer-reachable objects to the second
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse + ms.StackInuse), vmRSS()
}

// vmRSS is VmRSS of /proc/self/status in bytes, -1 where it cannot be read.
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return -1
}

// parkAll parks n goroutines, each receiving on its own unbuffered channel, calls whileParked
// once all are parked, then sends each its index; it returns the sum they received.
func parkAll(n int64, whileParked func()) int64 {
	chans := make([]chan int64, n)
	var ready, sum int64
	var done sync.WaitGroup
	done.Add(int(n))
	for i := range chans {
		c := make(chan int64)
		chans[i] = c
		go func() {
			atomic.AddInt64(&ready, 1)
			atomic.AddInt64(&sum, <-c)
			done.Done()
		}()
	}
	for atomic.LoadInt64(&ready) < n {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the last to count are a few instructions from parking
	whileParked()
	for i, c := range chans {
		c <- int64(i)
	}
	done.Wait()
	return atomic.LoadInt64(&sum)
}

// parked is Measures.parkedRun: RSS baseline at the start of the (fresh) process, three warm-up
// passes of m goroutines (nothing to compile here, but the same free-G reuse as the JVM peers),
// the heap baseline, then n goroutines parked and measured.
func parked(n, m int64) result {
	_, rss0 := footprint()
	for pass := 0; pass < 3; pass++ {
		parkAll(m, func() {})
	}
	heap0, _ := footprint()
	var heap1, rss1 int64
	sum := parkAll(n, func() { heap1, rss1 = footprint() })
	rssB := math.NaN()
	if rss0 >= 0 && rss1 >= 0 {
		rssB = float64(rss1-rss0) / float64(n)
	}
	return result{sum, []string{
		fmt.Sprintf("heap_b=%g", float64(heap1-heap0)/float64(n)),
		fmt.Sprintf("rss_b=%g", rssB),
		fmt.Sprintf("heap_base_mb=%g", float64(heap0)/1048576),
		fmt.Sprintf("rss_base_mb=%g", float64(rss0)/1048576),
	}}
}

// wakeGap is io.gosched.bench.Workload.wakeGapNanos: 1.000..1.999 ms.
func wakeGap(i int64) time.Duration {
	return time.Duration(1_000_000 + (i*7919%1000)*1000)
}

// wakeup: n wake-ups of a goroutine blocked in a receive. Go has no threads outside its
// scheduler, so the sender is a goroutine locked to its OS thread (runtime.LockOSThread): it holds
// a P while it sends, and when it sleeps its locked M hands that P (with the readied receiver in
// its runnext) to another M. Go's row is a wake-up across Ms, not one from outside the scheduler.
// A non-blocking send that finds no receiver waiting is tried again after another gap.
func wakeup(n int64) result {
	ch := make(chan int64)
	base := time.Now() // time.Since(base) reads the monotonic clock, like System.nanoTime
	latency := make([]int64, n)
	var received, missed int64
	done := make(chan struct{})
	go func() {
		for i := int64(0); i < n; i++ {
			sent := <-ch
			latency[i] = int64(time.Since(base)) - sent
			atomic.StoreInt64(&received, i+1)
		}
		close(done)
	}()
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := int64(0); i < n; i++ {
			for atomic.LoadInt64(&received) < i {
				time.Sleep(20 * time.Microsecond)
			}
			for {
				time.Sleep(wakeGap(i))
				select {
				case ch <- int64(time.Since(base)):
				default:
					atomic.AddInt64(&missed, 1)
					continue
				}
				break
			}
		}
	}()
	<-done
	sorted := append([]int64(nil), latency...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	var valid int64
	for _, l := range sorted {
		if l >= 0 {
			valid++
		}
	}
	return result{valid, []string{
		fmt.Sprintf("p50_us=%g", percentile(sorted, 0.50)/1e3),
		fmt.Sprintf("p99_us=%g", percentile(sorted, 0.99)/1e3),
		fmt.Sprintf("max_us=%g", float64(sorted[len(sorted)-1])/1e3),
		fmt.Sprintf("missed=%d", atomic.LoadInt64(&missed)),
	}}
}

func run(workload string, n, m int64) (result, error) {
	switch workload {
	case "spawn":
		return spawn(n), nil
	case "pingpong", "pingpong1p": // the driver runs pingpong1p with GOMAXPROCS=1
		return pingpong(n), nil
	case "prodcons":
		return prodcons(n, int(m)), nil
	case "prodcons0":
		return prodcons(n, 0), nil
	case "chain", "chain1p":
		return chain(n, m), nil
	case "forkjoin":
		return forkjoin(n), nil
	case "timers":
		return timers(n, m), nil
	case "hog":
		return hog(n), nil
	case "select":
		return selectLoop(n), nil
	case "gosched":
		return gosched(n), nil
	case "parked":
		return parked(n, m), nil
	case "wakeup":
		return wakeup(n), nil
	}
	return result{}, fmt.Errorf("unknown workload %q", workload)
}

func main() {
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "HELLO %s GOMAXPROCS=%d\n", runtime.Version(), runtime.GOMAXPROCS(0))
	out.Flush()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 1 && f[0] == "QUIT" {
			return
		}
		if len(f) != 4 || f[0] != "RUN" {
			fmt.Fprintf(out, "ERR bad command: %s\n", in.Text())
			out.Flush()
			continue
		}
		n, err1 := strconv.ParseInt(f[2], 10, 64)
		m, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			fmt.Fprintf(out, "ERR bad size: %s\n", in.Text())
			out.Flush()
			continue
		}
		runtime.GC()
		r, err := run(f[1], n, m)
		if err != nil {
			fmt.Fprintf(out, "ERR %v\n", err)
		} else {
			fmt.Fprintf(out, "OK check=%d %s\n", r.check, strings.Join(r.metrics, " "))
		}
		out.Flush()
	}
}
