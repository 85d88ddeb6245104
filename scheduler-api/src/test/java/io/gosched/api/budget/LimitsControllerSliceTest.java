package io.gosched.api.budget;

import io.gosched.service.budget.ServiceBudget;

import io.gosched.service.budget.Retained;

import io.gosched.service.budget.MemoryBudget;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * The web slice of {@code GET /api/v1/limits} over a real budget sized by properties: the sizes
 * the properties set, and what is held and open now, by kind, as the budget counts it.
 */
@WebFluxTest(properties = {"gosched.api.limits.max-retained-bytes=4194304", "gosched.api.limits.max-channel-bytes=1048576",
        "gosched.api.admission.max-open-streams=7", "gosched.api.admission.max-pending-channel-calls=9"})
@ContextConfiguration(classes = TestApplication.class)
@Import({LimitsController.class, LimitsControllerSliceTest.Budget.class})
@EnableConfigurationProperties(ServiceProperties.class)
class LimitsControllerSliceTest {

    @TestConfiguration(proxyBeanMethods = false)
    static class Budget {
        @Bean
        ServiceBudget serviceBudget(ServiceProperties properties) {
            return ServiceBudget.of(properties, 64L << 20, new ServiceMetrics(null));
        }
    }

    @Autowired
    WebTestClient http;

    @Autowired
    ServiceBudget budget;

    private JsonNode limits() {
        return http.get().uri("/api/v1/limits").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    @Test
    void theSizesAreThoseThePropertiesSet() {
        JsonNode l = limits();
        assertThat(l.at("/memory/maxBytes").asLong()).isEqualTo(4_194_304);
        assertThat(l.at("/memory/maxChannelBytes").asLong()).isEqualTo(1_048_576);
        assertThat(l.at("/memory/maxJobBytes").asLong()).as("unset: the default share of the budget")
                .isEqualTo(budget.sizes().maxJobBytes()).isPositive().isLessThan(4_194_304);
        assertThat(l.at("/streams/property").asString()).isEqualTo("gosched.api.admission.max-open-streams");
        assertThat(l.at("/streams/max").asInt()).isEqualTo(7);
        assertThat(l.at("/channelCalls/property").asString()).isEqualTo("gosched.api.admission.max-pending-channel-calls");
        assertThat(l.at("/channelCalls/max").asInt()).isEqualTo(9);
    }

    @Test
    void whatIsHeldAndOpenIsCountedByKindAsItIsNow() {
        MemoryBudget memory = budget.memory();
        long usedBefore = memory.used();
        assertThat(memory.tryCharge(Retained.CHANNELS, 10_000)).isTrue();
        budget.channelCalls().acquire();
        try {
            JsonNode l = limits();
            assertThat(l.at("/memory/heldBy/channels").asLong()).isEqualTo(10_000);
            assertThat(l.at("/memory/heldBy/channel_calls").asLong()).isEqualTo(ServiceBudget.CHANNEL_CALL_BYTES);
            assertThat(l.at("/memory/usedBytes").asLong()).isEqualTo(usedBefore + 10_000 + ServiceBudget.CHANNEL_CALL_BYTES);
            assertThat(l.at("/channelCalls/open").asInt()).isEqualTo(1);
            assertThat(l.at("/memory/heldBy").size()).as("every kind listed, held or not")
                    .isEqualTo(Retained.values().length);
        } finally {
            memory.release(Retained.CHANNELS, 10_000);
            budget.channelCalls().release();
        }
        JsonNode after = limits();
        assertThat(after.at("/memory/usedBytes").asLong()).isEqualTo(usedBefore);
        assertThat(after.at("/channelCalls/open").asInt()).isZero();
    }
}
