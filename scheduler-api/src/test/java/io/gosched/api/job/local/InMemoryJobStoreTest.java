package io.gosched.api.job.local;

import java.time.Clock;

import io.gosched.api.job.spi.JobStore;
import io.gosched.api.job.spi.JobStoreContract;

/** {@link JobStoreContract} for the embedded store: every "node" is the one store of this process. */
class InMemoryJobStoreTest implements JobStoreContract {

    final InMemoryJobStore store = InMemoryJobStore.unbounded(Clock.systemUTC());

    @Override
    public JobStore store(String node) {
        return store;
    }
}
