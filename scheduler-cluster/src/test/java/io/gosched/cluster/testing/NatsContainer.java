package io.gosched.cluster.testing;

import java.nio.file.Path;
import java.time.Duration;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * NATS in a container ({@link Images#nats()}: the official image of the version Debian's package
 * runs, or a local build of that package), JetStream on, its store bound to a directory the test
 * owns. A restart is a new container on the same store and the same host port, so it keeps the
 * messages and the URL, and clients reconnect by themselves.
 *
 * <p>Used by the {@link RequiresDocker} variants of the cluster tests.
 */
public final class NatsContainer implements NatsFixture {

    public static final DockerImageName IMAGE = Images.nats();

    private final Path dir;
    private GenericContainer<?> container;
    /** The host port of the first start: a restart binds the same one (null before the first start). */
    private Integer hostPort;

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
        GenericContainer<?> c = new GenericContainer<>(IMAGE)
                .withCommand("-js", "-sd", "/data")
                .withExposedPorts(4222)
                .withFileSystemBind(dir.toAbsolutePath().toString(), "/data")
                .waitingFor(Wait.forLogMessage(".*Server is ready.*", 1).withStartupTimeout(Duration.ofMinutes(2)));
        if (hostPort != null) {
            // Testcontainers applies this after its own random binding, so the old port wins.
            int port = hostPort;
            c.withCreateContainerCmdModifier(cmd -> cmd.getHostConfig()
                    .withPortBindings(new PortBinding(Ports.Binding.bindPort(port), ExposedPort.tcp(4222))));
        }
        c.start();
        container = c;
        hostPort = c.getMappedPort(4222);
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
        return true;
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
