package io.gosched.cluster.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.Options;

/**
 * Three (or more) Debian nats-servers routed into one JetStream cluster on loopback, each with
 * its own store: a stream with three replicas survives the loss of any one of them.
 * {@link #url()} lists every member, so a client fails over by itself.
 */
public final class NatsCluster implements NatsFixture {

    private final List<NatsServer> servers;

    private NatsCluster(List<NatsServer> servers) {
        this.servers = servers;
    }

    /** Starts {@code size} routed servers with stores under {@code dir}; skips the test without the binary. */
    public static NatsCluster start(Path dir, int size) {
        NatsCluster c = startForming(dir, size);
        try {
            c.awaitJetStream(Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /**
     * Starts the servers and returns at once, before they have routes or a JetStream meta
     * leader: what nodes that start beside a fresh cluster meet.
     */
    public static NatsCluster startForming(Path dir, int size) {
        NatsServer.assumeInstalled();
        List<Integer> routePorts = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            routePorts.add(NatsServer.freePort());
        }
        List<NatsServer> started = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                int self = i;
                String routes = routePorts.stream().filter(p -> p != (int) routePorts.get(self))
                        .map(p -> "nats://127.0.0.1:" + p).collect(Collectors.joining(","));
                started.add(NatsServer.start(dir.resolve("n" + (i + 1)), "n" + (i + 1), List.of("--cluster_name", "gosched",
                        "--cluster", "nats://127.0.0.1:" + routePorts.get(i), "--routes", routes)));
            }
            return new NatsCluster(started);
        } catch (RuntimeException e) {
            started.forEach(NatsServer::close);
            throw e;
        }
    }

    public NatsServer server(int i) {
        return servers.get(i);
    }

    public int size() {
        return servers.size();
    }

    @Override
    public String url() {
        return servers.stream().map(NatsServer::url).collect(Collectors.joining(","));
    }

    /** Kills every member (SIGKILL). */
    @Override
    public void kill() {
        servers.forEach(NatsServer::kill);
    }

    /** Restarts every member that is down, then waits for JetStream to have a leader again. */
    @Override
    public void restart() {
        servers.stream().filter(s -> !s.isRunning()).forEach(NatsServer::restart);
        awaitJetStream(Duration.ofSeconds(30));
    }

    @Override
    public boolean restartKeepsUrl() {
        return true;
    }

    @Override
    public String logTail() {
        return servers.stream().map(s -> "--- " + s.name() + "\n" + s.logTail()).collect(Collectors.joining("\n"));
    }

    @Override
    public void close() {
        servers.forEach(NatsServer::close);
    }

    /** Waits until the JetStream meta group has elected a leader: before that every API call fails. */
    public void awaitJetStream(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() - deadline < 0) {
            try (Connection nc = Nats.connect(Options.builder().servers(url().split(",")).connectionTimeout(Duration.ofSeconds(2))
                    .build())) {
                nc.jetStreamManagement().getAccountStatistics();
                return;
            } catch (IOException | JetStreamApiException e) {
                last = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("JetStream cluster has no leader after " + timeout + ": " + last + "\n" + logTail());
    }
}
