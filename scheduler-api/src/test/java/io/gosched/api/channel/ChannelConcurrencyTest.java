package io.gosched.api.channel;

import io.gosched.service.channel.ChannelService;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.api.testapp.TestApplication;
import io.gosched.runtime.Received;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real HTTP on a random port: 1,000 concurrent sends and 1,000 concurrent receives on one
 * unbuffered channel, with random server-side timeouts and clients that hang up mid-call.
 * Every value must be received exactly once (by an HTTP client, or left in the channel when
 * the storm ends), or have been reported as not sent; a value reported not sent must never
 * turn up. Also the RANDOM_PORT smoke test of a job.
 */
@SpringBootTest(classes = {TestApplication.class, ChannelConcurrencyTest.Meters.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ChannelConcurrencyTest {

    /** A registry, so the server's own count of values it handed out can be read. */
    @TestConfiguration(proxyBeanMethods = false)
    static class Meters {
        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Autowired
    SimpleMeterRegistry registry;

    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    @LocalServerPort
    int port;

    @Autowired
    ServiceBudget budget;

    @Autowired
    ChannelService channels;

    enum Outcome { SENT, NOT_SENT, UNKNOWN }

    @Test
    void everyValueExactlyOnceOrReportedNotSent() {
        int n = 1000 * STRESS;
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        String ch = "storm-" + UUID.randomUUID().toString().substring(0, 8);
        client.post().uri("/api/v1/channels").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", ch, "capacity", 0)).retrieve().toBodilessEntity().block(Duration.ofSeconds(10));
        Random rnd = new Random(42);
        Map<Integer, Outcome> sends = new ConcurrentHashMap<>();
        List<Integer> received = Collections.synchronizedList(new ArrayList<>());
        List<Mono<?>> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int value = i;
            long serverTimeout = rnd.nextInt(300);
            boolean hangUp = rnd.nextInt(100) < 25;
            Duration clientWait = Duration.ofMillis(hangUp ? 5 + rnd.nextInt(150) : 30_000);
            calls.add(client.post().uri("/api/v1/channels/{ch}/send", ch).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("value", value, "timeoutMs", serverTimeout)).retrieve().bodyToMono(JsonNode.class)
                    .timeout(clientWait)
                    .doOnNext(r -> sends.put(value, r.get("sent").asBoolean() ? Outcome.SENT : Outcome.NOT_SENT))
                    .onErrorResume(e -> {
                        sends.put(value, Outcome.UNKNOWN);
                        return Mono.empty();
                    }));
            long recvTimeout = rnd.nextInt(300);
            boolean recvHangUp = rnd.nextInt(100) < 25;
            Duration recvWait = Duration.ofMillis(recvHangUp ? 5 + rnd.nextInt(150) : 30_000);
            calls.add(client.post().uri("/api/v1/channels/{ch}/recv", ch).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("timeoutMs", recvTimeout)).retrieve().bodyToMono(JsonNode.class)
                    .timeout(recvWait)
                    .doOnNext(r -> {
                        if (r.get("received").asBoolean()) {
                            assertThat(r.get("ok").asBoolean()).isTrue();
                            received.add(r.get("value").asInt());
                        }
                    })
                    .onErrorResume(e -> Mono.empty()));
        }
        Collections.shuffle(calls, rnd);
        Flux.fromIterable(calls).flatMap(m -> m, 256).blockLast(Duration.ofSeconds(120));
        assertThat(sends).hasSize(n);

        // Whatever is still in flight on the server (requeued values, withdrawals) settles quickly.
        List<Integer> leftOver = new ArrayList<>();
        long quietSince = System.nanoTime();
        while (System.nanoTime() - quietSince < Duration.ofMillis(500).toNanos()) {
            Received<Object> r = channels.registry().lookup(ch).tryRecv();
            if (r != null && r.ok()) {
                leftOver.add(HeldValue.take(r.value()).asInt());
                quietSince = System.nanoTime();
            } else {
                Thread.onSpinWait();
            }
        }

        // A value the server answered with while its client was hanging up is lost in transit,
        // as any response can be: the server counts what it handed out, so those are known.
        double handedOut = registry.find("gosched.channel.operations").tag("op", "recv").tag("outcome", "ok").counter() == null ? 0
                : registry.get("gosched.channel.operations").tag("op", "recv").tag("outcome", "ok").counter().count();
        long inTransit = (long) handedOut - received.size();
        assertThat(inTransit).as("answers lost with their hung-up clients").isGreaterThanOrEqualTo(0);

        List<Integer> all = new ArrayList<>(received);
        all.addAll(leftOver);
        Set<Integer> seen = new HashSet<>();
        for (int v : all) {
            assertThat(seen.add(v)).as("value %d delivered twice", v).isTrue();
        }
        List<Integer> missing = new ArrayList<>();
        sends.forEach((v, o) -> {
            if (o == Outcome.SENT && !seen.contains(v)) {
                missing.add(v);
            } else if (o == Outcome.NOT_SENT) {
                assertThat(seen).as("value %d was reported not sent", v).doesNotContain(v);
            }
        });
        assertThat((long) missing.size()).as("sent values not seen %s must be answers lost in transit", missing)
                .isLessThanOrEqualTo(inTransit);
        long sent = sends.values().stream().filter(o -> o == Outcome.SENT).count();
        long notSent = sends.values().stream().filter(o -> o == Outcome.NOT_SENT).count();
        assertThat(sent).as("the storm delivered something").isGreaterThan(n / 10);
        assertThat(notSent).as("and timed some sends out").isGreaterThan(0);
        assertThat(channels.registry().view(channels.registry().get(ch)).waitingSenders()).isZero();
        assertThat(channels.registry().view(channels.registry().get(ch)).waitingReceivers()).isZero();

        // Every value that went in came out or was withdrawn, so every byte charged for it went back.
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (budget.channelCalls().open() > 0 && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertThat(channels.registry().get(ch).share().used()).as("bytes of channel %s", ch).isZero();
        assertThat(budget.memory().held(Retained.PENDING_SENDS)).as("pending sends").isZero();
        assertThat(budget.channelCalls().open()).as("channel calls in flight").isZero();
        assertThat(budget.memory().held(Retained.CHANNEL_CALLS)).as("bytes of channel calls").isZero();
    }

    @Test
    void smokeJobOverRealHttp() {
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        JsonNode job = client.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"template\":\"ping-pong\",\"params\":{\"rounds\":20}}").retrieve().bodyToMono(JsonNode.class)
                .block(Duration.ofSeconds(10));
        String id = job.get("id").stringValue();
        JsonNode v;
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        do {
            v = client.get().uri("/api/v1/jobs/{id}", id).retrieve().bodyToMono(JsonNode.class).block(Duration.ofSeconds(10));
        } while (!v.get("state").stringValue().equals("succeeded") && System.nanoTime() < end);
        assertThat(v.get("state").stringValue()).isEqualTo("succeeded");
    }
}
