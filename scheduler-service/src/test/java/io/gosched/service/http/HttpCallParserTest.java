package io.gosched.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import io.gosched.service.error.Violation;
import io.gosched.service.workload.JsonInput;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

/** The {@code "http"} member of a job body: what is refused up front, and where the target may be. */
class HttpCallParserTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static HttpCallParser parser(String... allowed) {
        HttpJobProperties p = HttpJobProperties.allowing(allowed);
        return new HttpCallParser(new HttpTargets(p), p);
    }

    private static List<Violation> violations(HttpCallParser parser, String json, long jobTimeoutMs) {
        JsonInput in = new JsonInput();
        parser.parse(JSON.readTree(json), "/http", jobTimeoutMs, in);
        return in.violations();
    }

    @Test
    void withNoTargetAllowedEveryHttpJobIsRefusedNamingTheProperty() {
        List<Violation> v = violations(parser(), "{\"url\": \"https://api.example.com/hooks/a\"}", 60_000);
        assertThat(v).singleElement().satisfies(x -> {
            assertThat(x.pointer()).isEqualTo("/http/url");
            assertThat(x.detail()).contains("gosched.jobs.http.allowed-targets");
        });
    }

    @Test
    void defaultsArePostAndThirtySecondsBoundedByTheJobsTimeout() {
        HttpCallParser p = parser("https://api.example.com/hooks/");
        JsonInput in = new JsonInput();
        HttpCall c = p.parse(JSON.readTree("{\"url\": \"https://api.example.com/hooks/a\", \"body\": {\"x\": 1}}"), "/http", 60_000, in);
        assertThat(in.violations()).isEmpty();
        assertThat(c.method()).isEqualTo("POST");
        assertThat(c.timeoutMs()).isEqualTo(30_000);
        HttpCall shortJob = p.parse(JSON.readTree("{\"url\": \"https://api.example.com/hooks/a\"}"), "/http", 5_000, new JsonInput());
        assertThat(shortJob.timeoutMs()).isEqualTo(5_000);
        assertThat(violations(p, "{\"url\": \"https://api.example.com/hooks/a\", \"timeoutMs\": 9000}", 5_000))
                .singleElement().satisfies(x -> assertThat(x.pointer()).isEqualTo("/http/timeoutMs"));
    }

    /** Strings that start like the allowed prefix but are not under it. */
    @ParameterizedTest
    @ValueSource(strings = {
            "https://api.example.com.evil.test/hooks/a",
            "https://api.example.com@evil.test/hooks/a",
            "https://user:pw@api.example.com/hooks/a",
            "http://api.example.com/hooks/a",
            "https://api.example.com:8443/hooks/a",
            "https://api.example.com/hooksX",
            "https://api.example.com/hooks/../admin",
            "https://api.example.com/other",
            "ftp://api.example.com/hooks/a",
            "/hooks/a",
            "https://api.example.com/hooks/a#frag"})
    void aTargetOutsideTheAllowedPrefixesIsRefused(String url) {
        assertThat(violations(parser("https://api.example.com/hooks"), "{\"url\": \"" + url + "\"}", 60_000))
                .as(url).singleElement().satisfies(x -> assertThat(x.pointer()).isEqualTo("/http/url"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "https://api.example.com/hooks",
            "https://API.example.com/hooks/a?b=c",
            "https://api.example.com:443/hooks/a/b",
            "https://api.example.com/hooks/x/../y"})
    void aTargetUnderAnAllowedPrefixIsTaken(String url) {
        assertThat(violations(parser("https://api.example.com/hooks"), "{\"url\": \"" + url + "\"}", 60_000)).as(url).isEmpty();
    }

    @Test
    void badFieldsAreEachNamed() {
        List<Violation> v = violations(parser("https://api.example.com/"), """
                {"method": "post", "url": "https://api.example.com/a", "extra": 1,
                 "headers": {"Idempotency-Key": "mine", "Host": "x", "X-Ok": "1", "X-Num": 5, "Bad Name": "v", "X-Crlf": "a\\r\\nb"}}
                """, 60_000);
        assertThat(v).extracting(Violation::pointer).containsExactlyInAnyOrder("/http/extra", "/http/method",
                "/http/headers/Idempotency-Key", "/http/headers/Host", "/http/headers/X-Num", "/http/headers/Bad Name",
                "/http/headers/X-Crlf");
        assertThat(violations(parser("https://api.example.com/"), "{\"method\": \"GET\", \"url\": \"https://api.example.com/a\", \"body\": 1}",
                60_000)).extracting(Violation::pointer).containsExactly("/http/body");
        assertThat(violations(parser("https://api.example.com/"), "{}", 60_000)).extracting(Violation::pointer).containsExactly("/http/url");
        assertThat(violations(parser("https://api.example.com/"), "[]", 60_000)).extracting(Violation::pointer).containsExactly("/http");
    }

    @Test
    void anUnusableAllowedTargetStopsTheStartNamingTheProperty() {
        assertThatThrownBy(() -> new HttpTargets(HttpJobProperties.allowing("https://ok.example/", "api.example.com/hooks")))
                .hasMessageContaining("gosched.jobs.http.allowed-targets[1]");
    }

    @Test
    void retryAfterReadsSecondsAndDates() {
        var now = java.time.Instant.parse("2026-12-05T10:00:00Z");
        assertThat(HttpCaller.retryAfter("30", now)).isEqualTo(now.plusSeconds(30));
        assertThat(HttpCaller.retryAfter("Sat, 05 Dec 2026 10:05:00 GMT", now)).isEqualTo(now.plusSeconds(300));
        assertThat(HttpCaller.retryAfter("soon", now)).isNull();
        assertThat(HttpCaller.retryAfter(null, now)).isNull();
    }
}
