package io.gosched.cluster;

import java.io.IOException;
import java.time.Duration;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.KeyValueManagement;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.StreamConfiguration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Creates the streams, consumers and buckets of {@link ClusterLayout}, or brings an existing
 * one's configuration up to this node's (the last node to start wins; nodes should agree).
 * Idempotent: every node runs it at start-up, and {@link #retrying} runs it again until it
 * succeeds or the connect timeout passes: on a cluster that is still forming (servers electing
 * a meta leader, another node creating the same stream) an answer may be a timeout or "not
 * found" for a stream that is on its way. Only "already in use" means another node made it.
 */
public final class Provisioning {

    private static final Log log = LogFactory.getLog(Provisioning.class);

    /** JetStream API error codes this class tells apart (nats-server's errors.json). */
    static final int STREAM_NOT_FOUND = 10059;
    static final int CONSUMER_NOT_FOUND = 10014;
    static final int BUCKET_NOT_FOUND = 10059;
    static final int STREAM_NAME_IN_USE = 10058;

    /** One provisioning step; run again from the start when it fails. */
    @FunctionalInterface
    public interface Step {
        void run() throws IOException, JetStreamApiException, InterruptedException;
    }

    /**
     * Runs step until it succeeds, at most for patience (the node's connect timeout), pausing
     * 100 ms, then twice as long up to 2 s, between tries. The last failure is the one thrown.
     */
    public static void retrying(Duration patience, String what, Step step)
            throws IOException, JetStreamApiException, InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        long pauseMillis = 100;
        for (int attempt = 1; ; attempt++) {
            try {
                step.run();
                return;
            } catch (IOException | JetStreamApiException e) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw e;
                }
                log.info("cluster mode: " + what + " failed (attempt " + attempt + "), trying again: " + e.getMessage());
                Thread.sleep(Math.min(pauseMillis, Math.max(1, left / 1_000_000)));
                pauseMillis = Math.min(2_000, pauseMillis * 2);
            }
        }
    }

    private Provisioning() {}

    public static void stream(JetStreamManagement jsm, StreamConfiguration config) throws IOException, JetStreamApiException {
        try {
            jsm.getStreamInfo(config.getName());
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != STREAM_NOT_FOUND) {
                throw e;
            }
            try {
                jsm.addStream(config);
                return;
            } catch (JetStreamApiException raced) {
                if (raced.getApiErrorCode() != STREAM_NAME_IN_USE) {
                    throw raced;
                }
                // another node created it between our look and our add: update it below
            }
        }
        try {
            jsm.updateStream(config);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == STREAM_NOT_FOUND) {
                throw e; // a stream still on its way (or gone again): try again
            }
            // e.g. a change of replicas the server refuses: keep running on the stream as it is
            log.warn("cluster mode: stream " + config.getName() + " keeps its existing configuration: " + e.getMessage());
        }
    }

    public static void consumer(JetStreamManagement jsm, String stream, ConsumerConfiguration config) throws IOException, JetStreamApiException {
        try {
            jsm.addOrUpdateConsumer(stream, config);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == CONSUMER_NOT_FOUND || e.getApiErrorCode() == STREAM_NOT_FOUND) {
                throw e;
            }
            log.warn("cluster mode: consumer " + config.getDurable() + " of " + stream + " keeps its existing configuration: "
                    + e.getMessage());
        }
    }

    public static void bucket(KeyValueManagement kvm, KeyValueConfiguration config) throws IOException, JetStreamApiException {
        try {
            kvm.getStatus(config.getBucketName());
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != BUCKET_NOT_FOUND) {
                throw e;
            }
            try {
                kvm.create(config);
                return;
            } catch (JetStreamApiException raced) {
                if (raced.getApiErrorCode() != STREAM_NAME_IN_USE) {
                    throw raced;
                }
                // created meanwhile by another node: update it below
            }
        }
        try {
            kvm.update(config);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == BUCKET_NOT_FOUND) {
                throw e;
            }
            log.warn("cluster mode: bucket " + config.getBucketName() + " keeps its existing configuration: " + e.getMessage());
        }
    }
}
