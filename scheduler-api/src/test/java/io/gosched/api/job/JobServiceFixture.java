package io.gosched.api.job;

import java.time.Duration;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import org.junit.jupiter.api.AfterEach;

/**
 * What the job service's own tests share: a two-P runtime for the service, and the service they
 * build on it (each its own way), both stopped after every test so that no job or goroutine
 * outlives it.
 */
abstract class JobServiceFixture {

    final GoRuntime runtime = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    JobService jobs;

    @AfterEach
    void stop() throws InterruptedException {
        if (jobs != null) {
            jobs.cancelAll(Duration.ofSeconds(5));
        }
        runtime.shutdown(Duration.ofSeconds(5));
    }
}
