package io.gosched.cluster.testing;

import java.nio.file.Path;
import java.time.Duration;

import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The official NATS image, the same version as Debian's package, with JetStream on and its store
 * bound to a directory the test owns. A restart is a new container on the same store, so it keeps
 * the messages but gets a new mapped port ({@link #restartKeepsUrl()} is false): tests that need
 * clients to reconnect by themselves run against {@link NatsServer} only.
 *
 * <p>Used by the {@code @Testcontainers(disabledWithoutDocker = true)} variants of the cluster
 * tests, which skip where there is no Docker engine.
 */
public final class NatsContainer implements NatsFixture {

    public static final DockerImageName IMAGE = DockerImageName.parse("nats:2.9.10");

    private final Path dir;
    private GenericContainer<?> container;

    private NatsContainer(Path dir) {
        this.dir = dir;
    }

    public static NatsContainer start(Path dir) {
        NatsContainer c = new NatsContainer(dir);
        c.launch();
        return c;
    }

    @SuppressWarnings("resource") // closed in close()
    private void launch() {
        container = new GenericContainer<>(IMAGE)
                .withCommand("-js", "-sd", "/data")
                .withExposedPorts(4222)
                .withFileSystemBind(dir.toAbsolutePath().toString(), "/data")
                .waitingFor(Wait.forLogMessage(".*Server is ready.*", 1).withStartupTimeout(Duration.ofMinutes(2)));
        container.start();
    }

    @Override
    public String url() {
        return "nats://" + container.getHost() + ":" + container.getMappedPort(4222);
    }

    @Override
    public void kill() {
        container.getDockerClient().killContainerCmd(container.getContainerId()).withSignal("KILL").exec();
        container.stop();
    }

    @Override
    public void restart() {
        launch();
    }

    @Override
    public boolean restartKeepsUrl() {
        return false;
    }

    @Override
    public String logTail() {
        String logs = container == null ? "" : container.getLogs();
        return logs.length() > 4000 ? logs.substring(logs.length() - 4000) : logs;
    }

    @Override
    public void close() {
        if (container != null) {
            container.stop();
        }
    }
}
