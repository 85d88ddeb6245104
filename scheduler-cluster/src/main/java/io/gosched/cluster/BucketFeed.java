package io.gosched.cluster;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A watch of a whole KV bucket that feeds a node's index of it, so that reads of the index cost
 * no JetStream request. The watch is an ephemeral consumer: a NATS server that restarted has
 * forgotten it, and the index would silently stop following the bucket; so each reconnection
 * starts a new watch, which delivers the bucket again and then says which keys it held (what
 * the index has beyond them was deleted while no watch ran).
 *
 * <p>Callbacks come from the connection's dispatcher, one at a time per watch; a rewatch runs on
 * its own short-lived thread, so an old and a new watch may overlap for a moment: an index
 * that must not go back keeps revisions and keeps the higher.
 */
public final class BucketFeed implements AutoCloseable {

    /** What the index does with what the watch delivers. */
    public interface Listener {

        /** An entry was written (operation PUT, with a value). */
        void put(KeyValueEntry entry);

        /** An entry was deleted or purged. */
        void removed(KeyValueEntry entry);

        /** A (re)load delivered the whole bucket, whose keys were {@code keys}; drop what is not among them. */
        void loaded(Set<String> keys);
    }

    private static final Log log = LogFactory.getLog(BucketFeed.class);
    private static final long LOAD_SECONDS = 60;

    private final KeyValue kv;
    private final String what;
    private final Listener listener;
    private NatsKeyValueWatchSubscription watch; // guarded by this
    private volatile boolean closed;

    private BucketFeed(KeyValue kv, String what, Listener listener) {
        this.kv = kv;
        this.what = what;
        this.listener = listener;
    }

    /**
     * Watches {@code kv}, returning once the bucket's entries have been delivered to {@code listener};
     * watches again on every reconnection of {@code conn}.
     *
     * @param what  the bucket as an operator knows it ("the schedules"), for logs and errors
     * @throws IllegalStateException if NATS refuses the watch or the bucket does not load within 60 s
     */
    public static BucketFeed start(ClusterConnection conn, KeyValue kv, String what, Listener listener) {
        BucketFeed feed = new BucketFeed(kv, what, listener);
        try {
            CountDownLatch loaded = new CountDownLatch(1);
            synchronized (feed) {
                feed.watch = feed.watch(loaded);
            }
            if (!loaded.await(LOAD_SECONDS, TimeUnit.SECONDS)) {
                feed.close();
                throw new IllegalStateException("cluster mode: " + what + " did not load from NATS within " + LOAD_SECONDS + " s");
            }
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("cluster mode: cannot watch " + what + " on NATS: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while loading " + what, e);
        }
        conn.onStateChange(state -> {
            if (state == ClusterConnection.State.UP && !feed.closed) {
                Thread.ofPlatform().name("gosched-rewatch").daemon(true).start(feed::rewatch);
            }
        });
        return feed;
    }

    /** A watch of the whole bucket; {@code loaded} counts down once it delivered what the bucket held. */
    private NatsKeyValueWatchSubscription watch(CountDownLatch loaded) throws IOException, JetStreamApiException, InterruptedException {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        return kv.watchAll(new KeyValueWatcher() {
            @Override
            public void watch(KeyValueEntry e) {
                if (e.getOperation() == KeyValueOperation.PUT && e.getValue() != null) {
                    seen.add(e.getKey());
                    listener.put(e);
                } else {
                    listener.removed(e);
                }
            }

            @Override
            public void endOfData() {
                if (loaded.getCount() > 0) {
                    listener.loaded(seen);
                    loaded.countDown();
                }
            }
        });
    }

    /** Replaces the watch after a reconnection. Executed by one short-lived thread per reconnection. */
    private synchronized void rewatch() {
        try {
            if (closed) {
                return;
            }
            try {
                watch.unsubscribe();
            } catch (RuntimeException gone) {
                // the old subscription died with the server
            }
            CountDownLatch loaded = new CountDownLatch(1);
            watch = watch(loaded);
            if (!loaded.await(LOAD_SECONDS, TimeUnit.SECONDS)) {
                log.warn("cluster mode: " + what + " did not reload within " + LOAD_SECONDS + " s after reconnecting");
            }
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.warn("cluster mode: cannot watch " + what + " again after reconnecting: " + e.getMessage()
                    + "; single reads go to NATS, listings may lag until the next reconnection");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops following the bucket. */
    @Override
    public synchronized void close() {
        closed = true;
        try {
            if (watch != null) {
                watch.unsubscribe();
            }
        } catch (RuntimeException e) {
            // gone with the connection
        }
    }
}
