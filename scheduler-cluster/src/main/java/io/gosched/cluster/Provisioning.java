package io.gosched.cluster;

import java.io.IOException;

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
 * Idempotent: every node runs it at start-up.
 */
public final class Provisioning {

    private static final Log log = LogFactory.getLog(Provisioning.class);

    /** JetStream API error codes this class tells apart (nats-server's errors.json). */
    static final int STREAM_NOT_FOUND = 10059;
    static final int CONSUMER_NOT_FOUND = 10014;
    static final int BUCKET_NOT_FOUND = 10059;

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
                // another node created it between our look and our add: update it below
            }
        }
        try {
            jsm.updateStream(config);
        } catch (JetStreamApiException e) {
            // e.g. a change of replicas the server refuses: keep running on the stream as it is
            log.warn("cluster mode: stream " + config.getName() + " keeps its existing configuration: " + e.getMessage());
        }
    }

    public static void consumer(JetStreamManagement jsm, String stream, ConsumerConfiguration config) throws IOException, JetStreamApiException {
        try {
            jsm.addOrUpdateConsumer(stream, config);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == CONSUMER_NOT_FOUND) {
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
                // created meanwhile by another node
            }
        }
        try {
            kvm.update(config);
        } catch (JetStreamApiException e) {
            log.warn("cluster mode: bucket " + config.getBucketName() + " keeps its existing configuration: " + e.getMessage());
        }
    }
}
