package io.gosched.example;

import java.util.ArrayList;
import java.util.List;

import io.gosched.handler.JobContext;
import io.gosched.handler.JobHandler;
import io.gosched.runtime.Go;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import org.springframework.stereotype.Component;

/** A computing handler: the primes below a bound, checking for a cancel now and then. */
@Component
public class PrimeHandler {

    public record Primes(@Min(2) @Max(10_000_000) int below) {}

    public record Found(int count, int largest, List<Integer> first) {}

    @JobHandler(value = "primes", description = "Counts the primes below a bound (a sieve)")
    public Found primes(Primes args, JobContext ctx) {
        boolean[] composite = new boolean[args.below()];
        int count = 0;
        int largest = 0;
        List<Integer> first = new ArrayList<>();
        for (int i = 2; i < args.below(); i++) {
            if ((i & 0xFFFF) == 0) {
                if (ctx.context().err() != null) {
                    throw ctx.context().err(); // cancelled or past its deadline
                }
                Go.checkpoint(); // a safe point: a long loop lets other goroutines have the P
            }
            if (!composite[i]) {
                count++;
                largest = i;
                if (first.size() < 10) {
                    first.add(i);
                }
                for (long j = (long) i * i; j < args.below(); j += i) {
                    composite[(int) j] = true;
                }
            }
        }
        return new Found(count, largest, first);
    }
}
