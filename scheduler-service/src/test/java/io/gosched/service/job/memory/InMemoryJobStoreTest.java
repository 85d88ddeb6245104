package io.gosched.service.job.memory;

import java.time.Clock;

import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobStoreContract;

/** {@link JobStoreContract} for the embedded store: every "node" is the one store of this process. */
class InMemoryJobStoreTest implements JobStoreContract {

    final InMemoryJobStore store = InMemoryJobStore.unbounded(Clock.systemUTC());

    @Override
    public JobStore store(String node) {
        return store;
    }
}
