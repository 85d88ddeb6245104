package io.gosched.api.channel;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.api.testapp.TestApplication;
import io.gosched.runtime.Received;
import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelService;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Many HTTP clients select at once over three channels (unbuffered, 1, 10) while producers send
 * N distinct values into them over HTTP; the selects have random short timeouts and a tenth of
 * them hang up mid-wait. Every value sent must be received exactly once (by a select, or left in
 * a channel at the end): none lost, none doubled.
 */
@SpringBootTest(classes = {TestApplication.class, SelectConcurrencyTest.Meters.class}, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"gosched.api.admission.max-pending-channel-calls=4096"})
class SelectConcurrencyTest {

    /** A registry, so the server's own count of selects that fired can be read. */
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
    ChannelService channels;

    @Autowired
    ServiceBudget budget;

    /** True when no value waits in or for any of the channels. */
    private boolean drained(List<String> names) {
        return names.stream().map(channels.registry()::get).allMatch(nc -> nc.chan().len() == 0 && nc.chan().waitingSenders() == 0);
    }

    @Test
    void everyValueSentIsReceivedExactlyOnce() throws Exception {
        int n = 1000 * STRESS;
        int clients = 48;
        WebClient http = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        // The selects that hang up get a connection of their own each, never a pooled one: a
        // cancelled exchange closes its connection, and a pooled connection closed under another
        // request fails that request ("closed BEFORE response"), a client artifact, not a lost value.
        WebClient hangingUp = WebClient.builder().baseUrl("http://127.0.0.1:" + port)
                .clientConnector(new org.springframework.http.client.reactive.ReactorClientHttpConnector(
                        reactor.netty.http.client.HttpClient.newConnection()))
                .build();
        String tag = UUID.randomUUID().toString().substring(0, 6);
        List<String> names = List.of("sc0-" + tag, "sc1-" + tag, "sc10-" + tag);
        int[] caps = {0, 1, 10};
        for (int i = 0; i < names.size(); i++) {
            http.post().uri("/api/v1/channels").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("name", names.get(i), "capacity", caps[i])).retrieve().toBodilessEntity().block(Duration.ofSeconds(10));
        }
        String cases = "[{\"recv\":\"" + names.get(0) + "\"},{\"recv\":\"" + names.get(1) + "\"},{\"recv\":\"" + names.get(2) + "\"}]";
        Map<Integer, Integer> got = new ConcurrentHashMap<>();
        AtomicInteger sentOk = new AtomicInteger();
        AtomicInteger producersLeft = new AtomicInteger(1);
        AtomicInteger hungUp = new AtomicInteger();
        AtomicInteger seenByClients = new AtomicInteger();

        Mono<Void> producers = Flux.range(0, n)
                .flatMap(i -> http.post().uri("/api/v1/channels/{c}/send", names.get(ThreadLocalRandom.current().nextInt(3)))
                        .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"value\":" + i + ",\"timeoutMs\":30000}")
                        .retrieve().bodyToMono(JsonNode.class)
                        .doOnNext(r -> {
                            assertThat(r.get("sent").asBoolean()).as("send of %d", i).isTrue();
                            sentOk.incrementAndGet();
                        }), 32)
                .then()
                .doFinally(s -> producersLeft.decrementAndGet());

        Mono<JsonNode> oneSelect = Mono.defer(() -> {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            boolean hangUp = rnd.nextInt(10) == 0;
            Mono<JsonNode> call = (hangUp ? hangingUp : http).post().uri("/api/v1/select").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"cases\":" + cases + ",\"timeoutMs\":" + rnd.nextInt(20, 300) + "}")
                    .retrieve().bodyToMono(JsonNode.class)
                    .doOnNext(r -> {
                        if (r.has("index")) {
                            assertThat(r.get("ok").asBoolean()).isTrue();
                            got.merge(r.get("value").asInt(), 1, Integer::sum);
                            seenByClients.incrementAndGet();
                        }
                    });
            if (hangUp) {
                // hang up after a moment: whatever the select took by then must go back, not vanish
                return call.doOnCancel(hungUp::incrementAndGet).take(Duration.ofMillis(rnd.nextInt(1, 60)))
                        .onErrorResume(e -> Mono.empty());
            }
            return call;
        });
        Mono<Void> consumers = Flux.range(0, clients)
                .flatMap(k -> oneSelect.repeat(() -> producersLeft.get() > 0 || !drained(names)).then(), clients)
                .then();

        Mono.when(producers, consumers.take(Duration.ofSeconds(120))).block(Duration.ofSeconds(180));

        // Whatever is still buffered counts once too: a value put back by a hung-up select. The
        // server may learn of a hang-up well after its client gave up (the connection's close is
        // processed on a busy machine), and the value goes back only then, after the last consumer
        // stopped: so drain until every value is accounted for or nothing has come back for long.
        // A value really lost never comes back, and the assertions below then name it.
        assertThat(sentOk.get()).isEqualTo(n);
        var fired = registry.find("gosched.channel.operations").tag("op", "select").tag("outcome", "ok").counter();
        long inTransit = 0;
        long quietUntil = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            for (String name : names) {
                Received<Object> r;
                while ((r = channels.registry().lookup(name).tryRecv()) != null && r.ok()) {
                    got.merge(HeldValue.take(r.value()).asInt(), 1, Integer::sum);
                }
            }
            // A value the server answered with while its client was hanging up is lost in transit,
            // as any response can be: the server counts what its selects handed out, so those are known.
            inTransit = (long) (fired == null ? 0 : fired.count()) - seenByClients.get();
            if ((long) n - got.size() <= inTransit || System.nanoTime() > quietUntil) {
                break;
            }
            Thread.sleep(20);
        }
        assertThat(got.entrySet().stream().filter(e -> e.getValue() != 1).toList()).as("values received more than once").isEmpty();
        assertThat(inTransit).as("answers lost with their hung-up clients").isBetween(0L, (long) hungUp.get());
        assertThat((long) n - got.size()).as("values never received (selects hung up: %d)", hungUp.get()).isEqualTo(inTransit);
        assertThat(hungUp.get()).as("the storm hung some selects up").isPositive();
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (budget.channelCalls().open() > 0 && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(budget.channelCalls().open()).as("channel calls in flight").isZero();
        assertThat(budget.memory().held(Retained.PENDING_SENDS)).as("pending sends").isZero();
        for (String name : names) {
            assertThat(channels.registry().get(name).share().used()).as("bytes of channel %s", name).isZero();
        }
    }
}
