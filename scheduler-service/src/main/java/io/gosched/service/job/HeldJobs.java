package io.gosched.service.job;

import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The jobs this node holds now, by id: pulled and waiting for room, or claimed and running, until
 * their slot goes back. One entry per job: a later delivery of the same ticket takes over the
 * entry's lease rather than adding one. Thread-safe.
 */
final class HeldJobs {

    private final ConcurrentHashMap<String, HeldJob> byId = new ConcurrentHashMap<>();

    HeldJob get(String id) {
        return byId.get(id);
    }

    boolean holds(String id) {
        return byId.containsKey(id);
    }

    void put(HeldJob job) {
        byId.put(job.id, job);
    }

    /** Forgets {@code job}, if it is still the one held under its id. */
    void remove(HeldJob job) {
        byId.remove(job.id, job);
    }

    Collection<HeldJob> all() {
        return byId.values();
    }

    boolean isEmpty() {
        return byId.isEmpty();
    }
}
