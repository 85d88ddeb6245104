package io.gosched.api.workload;

import io.gosched.service.workload.WorkloadTemplates;

import io.gosched.service.workload.WorkloadParser;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.service.ServiceProperties;
import io.gosched.api.testapp.TestApplication;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * The web slice of {@code GET /api/v1/workloads}: a client building a job reads the DSL's limits
 * as this node enforces them (set here by properties), every op, and every template with bounds
 * that admit its own default.
 */
@WebFluxTest(properties = {"gosched.api.limits.max-depth=5", "gosched.api.limits.max-steps=321",
        "gosched.api.limits.max-sleep-ms=1234"})
@ContextConfiguration(classes = TestApplication.class)
@Import({WorkloadConfiguration.class, WorkloadControllerSliceTest.Workloads.class})
@EnableConfigurationProperties(ServiceProperties.class)
class WorkloadControllerSliceTest {

    /** The parser and the templates as the service makes them. */
    @TestConfiguration(proxyBeanMethods = false)
    static class Workloads {
        @Bean
        WorkloadParser workloadParser(ServiceProperties properties) {
            return new WorkloadParser(properties.limits());
        }

        @Bean
        WorkloadTemplates workloadTemplates() {
            return new WorkloadTemplates();
        }
    }

    @Autowired
    WebTestClient http;

    @Autowired
    WorkloadTemplates templates;

    private JsonNode catalogue() {
        return http.get().uri("/api/v1/workloads").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    @Test
    void theLimitsAreThoseThisNodeEnforces() {
        JsonNode limits = catalogue().get("limits");
        assertThat(limits.get("maxDepth").asInt()).isEqualTo(5);
        assertThat(limits.get("maxSteps").asInt()).isEqualTo(321);
        assertThat(limits.get("maxSleepMs").asLong()).isEqualTo(1234);
        assertThat(limits.size()).as("every limit the parser checks").isEqualTo(10);
    }

    @Test
    void everyOpOfTheDslIsListedInItsOrder() {
        List<String> ops = new ArrayList<>();
        catalogue().get("ops").forEach(o -> ops.add(o.asString()));
        assertThat(ops).isEqualTo(WorkloadParser.OPS).contains("spawn", "select", "syscall");
    }

    @Test
    void everyTemplateIsListedWithParamsWhoseBoundsAdmitTheirDefault() {
        JsonNode listed = catalogue().get("templates");
        assertThat(listed).hasSize(templates.list().size()).isNotEmpty();
        for (JsonNode t : listed) {
            String name = t.get("name").asString();
            assertThat(templates.exists(name)).as(name).isTrue();
            assertThat(t.get("description").asString()).as(name).isNotBlank();
            for (JsonNode p : t.get("params")) {
                assertThat(p.get("defaultValue").asLong()).as(name + "." + p.get("name").asString())
                        .isBetween(p.get("min").asLong(), p.get("max").asLong());
            }
        }
    }
}
