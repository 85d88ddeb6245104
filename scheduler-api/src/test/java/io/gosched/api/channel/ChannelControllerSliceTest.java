package io.gosched.api.channel;

import io.gosched.service.testing.TestChannels;

import io.gosched.service.channel.ChannelService;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The web slice of named channels over the real {@link ChannelService} (embedded, no runtime
 * needed: HTTP sends and receives are platform-thread operations): what each bad input answers
 * (the field or parameter named, nothing reaching the service), and the shapes a client reads.
 */
@WebFluxTest(properties = {"gosched.api.limits.max-channel-capacity=64", "gosched.api.channels.max-timeout-ms=500",
        "gosched.api.channels.default-timeout-ms=20"})
@ContextConfiguration(classes = TestApplication.class)
@Import({ChannelController.class, ApiExceptionHandler.class, ChannelControllerSliceTest.Service.class})
@EnableConfigurationProperties(ServiceProperties.class)
class ChannelControllerSliceTest {

    @TestConfiguration(proxyBeanMethods = false)
    static class Service {
        @Bean
        ChannelService channelService(ServiceProperties properties) {
            ServiceMetrics metrics = new ServiceMetrics(null);
            return TestChannels.soleNode(properties, metrics, ServiceBudget.of(properties, metrics));
        }
    }

    @Autowired
    WebTestClient http;

    @Autowired
    ChannelService channels;

    private WebTestClient.ResponseSpec post(String uri, String json) {
        return http.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(json).exchange();
    }

    private void invalid(WebTestClient.ResponseSpec r, String pointer, String detail) {
        r.expectStatus().isEqualTo(422)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-request")
                .jsonPath("$.errors[0].pointer").isEqualTo(pointer)
                .jsonPath("$.errors[0].detail").value(d -> assertThat((String) d).contains(detail));
    }

    @Test
    void createAnswers201WithItsLocationAndTheChannelsState() {
        post("/api/v1/channels", "{\"name\":\"slice-a\",\"capacity\":3}").expectStatus().isCreated()
                .expectHeader().valueEquals("Location", "/api/v1/channels/slice-a")
                .expectBody()
                .jsonPath("$.name").isEqualTo("slice-a")
                .jsonPath("$.capacity").isEqualTo(3)
                .jsonPath("$.len").isEqualTo(0)
                .jsonPath("$.closed").isEqualTo(false);
        post("/api/v1/channels", "{\"name\":\"slice-a\"}").expectStatus().isEqualTo(409)
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:channel-exists");
    }

    @Test
    void aBadNameOrCapacityIs422NamingTheFieldAndMakesNothing() {
        int before = channels.registry().size();
        invalid(post("/api/v1/channels", "{\"name\":\"-starts-with-a-dash\"}"), "/name", "must match");
        invalid(post("/api/v1/channels", "{\"capacity\":1}"), "/name", "must not be null");
        invalid(post("/api/v1/channels", "{\"name\":\"slice-neg\",\"capacity\":-1}"), "/capacity", "greater than or equal to 0");
        invalid(post("/api/v1/channels", "{\"name\":\"slice-big\",\"capacity\":65}"), "/capacity", "between 0 and 64, was 65");
        assertThat(channels.registry().size()).as("no bad request made a channel").isEqualTo(before);
    }

    @Test
    void aSendWithoutAValueOrATimeoutOutOfRangeIs422NamingTheField() {
        post("/api/v1/channels", "{\"name\":\"slice-s\",\"capacity\":1}").expectStatus().isCreated();
        invalid(post("/api/v1/channels/slice-s/send", "{\"timeoutMs\":10}"), "/value", "is required");
        invalid(post("/api/v1/channels/slice-s/send", "{\"value\":1,\"timeoutMs\":501}"), "/timeoutMs", "between 0 and 500, was 501");
        invalid(post("/api/v1/channels/slice-s/recv", "{\"timeoutMs\":-1}"), "/timeoutMs", "between 0 and 500, was -1");
        http.get().uri("/api/v1/channels/slice-s").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.len").isEqualTo(0);
    }

    @Test
    void aValueSentIsReceivedAndAnEmptyChannelAnswersTimeoutAfterTheDefault() {
        post("/api/v1/channels", "{\"name\":\"slice-v\",\"capacity\":1}").expectStatus().isCreated();
        post("/api/v1/channels/slice-v/send", "{\"value\":{\"n\":[1,null,\"x\"]}}").expectStatus().isOk()
                .expectBody().jsonPath("$.sent").isEqualTo(true);
        http.post().uri("/api/v1/channels/slice-v/recv").exchange().expectStatus().isOk()
                .expectBody()
                .jsonPath("$.received").isEqualTo(true)
                .jsonPath("$.ok").isEqualTo(true)
                .jsonPath("$.value.n[2]").isEqualTo("x");
        http.post().uri("/api/v1/channels/slice-v/recv").exchange().expectStatus().isOk()
                .expectBody()
                .jsonPath("$.received").isEqualTo(false)
                .jsonPath("$.reason").isEqualTo("timeout");
    }

    @Test
    void aNameThatCannotExistIs404WithoutReachingTheService() {
        String longName = "a".repeat(200);
        http.get().uri("/api/v1/channels/" + longName).exchange().expectStatus().isNotFound()
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:not-found")
                .jsonPath("$.detail").value(d -> assertThat((String) d).contains("a".repeat(64) + "...")
                        .doesNotContain("a".repeat(65)));
        post("/api/v1/channels/bad%20name/send", "{\"value\":1}").expectStatus().isNotFound();
        http.delete().uri("/api/v1/channels/nobody-made-this").exchange().expectStatus().isNotFound();
    }

    @Test
    void closeThenCloseAgainIs409AndDeleteIs204() {
        post("/api/v1/channels", "{\"name\":\"slice-c\"}").expectStatus().isCreated();
        http.post().uri("/api/v1/channels/slice-c/close").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.closed").isEqualTo(true);
        http.post().uri("/api/v1/channels/slice-c/close").exchange().expectStatus().isEqualTo(409)
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:channel-closed");
        post("/api/v1/channels/slice-c/send", "{\"value\":1}").expectStatus().isEqualTo(409);
        http.delete().uri("/api/v1/channels/slice-c").exchange().expectStatus().isNoContent();
        http.get().uri("/api/v1/channels/slice-c").exchange().expectStatus().isNotFound();
    }
}
