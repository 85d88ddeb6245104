import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import io.nats.client.Connection;
import io.nats.client.ConsumerContext;
import io.nats.client.FetchConsumeOptions;
import io.nats.client.FetchConsumer;
import io.nats.client.JetStream;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;

/**
 * Probe (not part of the build): what a JetStream consumer remembers when nats-server is killed
 * (SIGKILL) and restarted on the same store. Twenty messages on a work-queue stream; ten are
 * fetched and acked with ackSync, one more is fetched and held unacked; the server is killed
 * {@code delayMs} after that; every message that comes back within 8 s is printed as
 * {@code data:deliveryCount}. Measured 2026-12-03 with the Debian nats-server 2.9.10: at 5 ms all
 * ten acked messages came back and the held m10 came back as delivery 1 (the consumer's state is
 * written in the background and was lost); at 300 ms and 1.5 s only m10 came back, as delivery 2.
 * Why the job engine settles claims whose CAS got no answer: docs/cluster.md, "A claim that got no
 * answer".
 *
 * <pre>
 * CP=$(find ~/.m2/repository/io/nats/jnats -name 'jnats-*.jar' | sort | tail -1)
 * javac -cp $CP -d /tmp/probe bench/probes/NatsKillForgets.java
 * java -cp $CP:/tmp/probe NatsKillForgets 5 3      # delay in ms, trials
 * </pre>
 */
public class NatsKillForgets {

    static Process start(Path dir, int port) throws Exception {
        Process p = new ProcessBuilder("nats-server", "-js", "-sd", dir.toString(), "-a", "127.0.0.1", "-p", Integer.toString(port))
                .redirectErrorStream(true).redirectOutput(dir.resolve("log.txt").toFile()).start();
        Thread.sleep(700);
        return p;
    }

    static Message one(ConsumerContext cc) throws Exception {
        try (FetchConsumer f = cc.fetch(FetchConsumeOptions.builder().maxMessages(1).noWait().build())) {
            return f.nextMessage();
        }
    }

    public static void main(String[] a) throws Exception {
        long delayMs = Long.parseLong(a[0]);
        int trials = Integer.parseInt(a[1]);
        int port = 14222 + (int) (ProcessHandle.current().pid() % 1000);
        for (int trial = 0; trial < trials; trial++) {
            Path dir = Files.createTempDirectory("nats-kill");
            Process p = start(dir, port);
            Options o = new Options.Builder().server("nats://127.0.0.1:" + port).maxReconnects(-1)
                    .reconnectWait(Duration.ofMillis(100)).build();
            try (Connection c = Nats.connect(o)) {
                c.jetStreamManagement().addStream(StreamConfiguration.builder().name("S").subjects("s.>")
                        .retentionPolicy(RetentionPolicy.WorkQueue).storageType(StorageType.File).build());
                c.jetStreamManagement().addOrUpdateConsumer("S", ConsumerConfiguration.builder().durable("C").filterSubject("s.>")
                        .ackPolicy(AckPolicy.Explicit).ackWait(Duration.ofSeconds(3)).maxDeliver(20).build());
                JetStream js = c.jetStream();
                for (int i = 0; i < 20; i++) {
                    js.publish("s.x", ("m" + i).getBytes());
                }
                ConsumerContext cc = c.getConsumerContext("S", "C");
                for (int i = 0; i < 10; i++) {
                    one(cc).ackSync(Duration.ofSeconds(2));
                }
                String held = new String(one(cc).getData());
                Thread.sleep(delayMs);
                p.destroyForcibly().waitFor();
                p = start(dir, port);
                Thread.sleep(1500);
                StringBuilder back = new StringBuilder();
                long end = System.currentTimeMillis() + 8000;
                while (System.currentTimeMillis() < end) {
                    try (FetchConsumer f = cc.fetch(FetchConsumeOptions.builder().maxMessages(50).expiresIn(1000).build())) {
                        Message m;
                        while ((m = f.nextMessage()) != null) {
                            back.append(new String(m.getData())).append(':').append(m.metaData().deliveredCount()).append(' ');
                            m.ack();
                        }
                    } catch (Exception reconnecting) {
                        Thread.sleep(200);
                    }
                }
                System.out.println("trial " + trial + " (held " + held + "): " + back);
            } finally {
                p.destroyForcibly().waitFor();
            }
        }
    }
}
