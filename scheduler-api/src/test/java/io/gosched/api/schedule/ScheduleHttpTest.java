package io.gosched.api.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;

import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Every schedule endpoint over HTTP against the whole auto-configured API, and every kind of bad input. */
@SpringBootTest(classes = TestApplication.class)
@AutoConfigureWebTestClient
class ScheduleHttpTest {

    static final String JOB = "{'workload':{'steps':[{'op':'yield'}]}}";

    @Autowired
    WebTestClient http;

    static String q(String s) {
        return s.replace('\'', '"');
    }

    WebTestClient.ResponseSpec post(String uri, String body) {
        return http.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(q(body)).exchange();
    }

    WebTestClient.ResponseSpec put(String uri, String body) {
        return http.put().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(q(body)).exchange();
    }

    JsonNode body(WebTestClient.ResponseSpec r) {
        return r.expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    /** A 422 whose errors name {@code pointer}; the error's detail. */
    String invalid(String body, String pointer) {
        JsonNode p = body(post("/api/v1/schedules", body).expectStatus().isEqualTo(422)
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON));
        assertThat(p.get("type").stringValue()).isEqualTo("urn:gosched:problem:invalid-request");
        for (JsonNode e : p.get("errors")) {
            if (e.get("pointer").stringValue().equals(pointer)) {
                return e.get("detail").stringValue();
            }
        }
        throw new AssertionError("no error at " + pointer + " in " + p);
    }

    @Test
    void createReadListAndDelete() {
        JsonNode v = body(post("/api/v1/schedules", "{'name':'crud','cron':'0 0 3 * * *','timeZone':'Europe/Berlin','job':" + JOB + "}")
                .expectStatus().isCreated().expectHeader().valueEquals("Location", "/api/v1/schedules/crud"));
        assertThat(v.get("name").stringValue()).isEqualTo("crud");
        assertThat(v.get("cron").stringValue()).isEqualTo("0 0 3 * * *");
        assertThat(v.get("timeZone").stringValue()).isEqualTo("Europe/Berlin");
        assertThat(v.get("overlap").stringValue()).isEqualTo("skip");
        assertThat(v.get("misfire").stringValue()).isEqualTo("skip");
        assertThat(v.get("paused").booleanValue()).isFalse();
        Instant next = Instant.parse(v.get("nextFireAt").stringValue());
        assertThat(next).isAfter(Instant.now()).isBefore(Instant.now().plus(Duration.ofHours(25)));
        assertThat(v.has("lastFireAt")).isFalse();

        JsonNode three = body(http.get().uri("/api/v1/schedules/crud?next=3").exchange().expectStatus().isOk());
        assertThat(three.get("nextFireTimes")).hasSize(3);
        assertThat(three.get("nextFireTimes").get(0).stringValue()).isEqualTo(next.toString());
        assertThat(Duration.between(Instant.parse(three.get("nextFireTimes").get(0).stringValue()),
                Instant.parse(three.get("nextFireTimes").get(1).stringValue()))).isBetween(Duration.ofHours(23), Duration.ofHours(25));

        JsonNode list = body(http.get().uri("/api/v1/schedules").exchange().expectStatus().isOk());
        assertThat(list.get("items").valueStream().map(i -> i.get("name").stringValue())).contains("crud");

        http.delete().uri("/api/v1/schedules/crud").exchange().expectStatus().isOk();
        assertThat(body(http.get().uri("/api/v1/schedules/crud").exchange().expectStatus().isNotFound()).get("type").stringValue())
                .isEqualTo("urn:gosched:problem:not-found");
        http.delete().uri("/api/v1/schedules/crud").exchange().expectStatus().isNotFound();
    }

    @Test
    void aNameIsTakenOnce() {
        post("/api/v1/schedules", "{'name':'twice','every':'PT1H','job':" + JOB + "}").expectStatus().isCreated();
        JsonNode p = body(post("/api/v1/schedules", "{'name':'twice','every':'PT2H','job':" + JOB + "}").expectStatus().isEqualTo(409));
        assertThat(p.get("type").stringValue()).isEqualTo("urn:gosched:problem:schedule-exists");
        assertThat(p.get("schedule").stringValue()).isEqualTo("twice");
    }

    @Test
    void badInputIsAProblemNamingTheField() {
        assertThat(invalid("{'name':'c1','cron':'0 61 * * * *','job':" + JOB + "}", "/cron")).contains("field 2 (minute)").contains("61");
        assertThat(invalid("{'name':'c2','cron':'1 2 3','job':" + JOB + "}", "/cron")).contains("6 fields");
        assertThat(invalid("{'name':'c3','cron':'0 0 0 30 2 *','job':" + JOB + "}", "/cron")).contains("never fires");
        assertThat(invalid("{'name':'z','cron':'@daily','timeZone':'Mars/Olympus','job':" + JOB + "}", "/timeZone"))
                .contains("unknown time zone 'Mars/Olympus'");
        assertThat(invalid("{'name':'b','cron':'@daily','every':'PT1M','job':" + JOB + "}", "")).contains("exactly one of 'cron'");
        assertThat(invalid("{'name':'n','job':" + JOB + "}", "")).contains("exactly one of 'cron'");
        assertThat(invalid("{'name':'e1','every':'PT0.5S','job':" + JOB + "}", "/every")).contains("at least PT1S");
        assertThat(invalid("{'name':'e2','every':'soon','job':" + JOB + "}", "/every")).contains("ISO-8601");
        assertThat(invalid("{'name':'no spaces','every':'PT1M','job':" + JOB + "}", "/name")).contains("letters, digits");
        assertThat(invalid("{'every':'PT1M','job':" + JOB + "}", "/name")).contains("required");
        assertThat(invalid("{'name':'o','every':'PT1M','overlap':'queue','job':" + JOB + "}", "/overlap"))
                .contains("skip, allow, cancel-previous");
        assertThat(invalid("{'name':'m','every':'PT1M','misfire':'all','job':" + JOB + "}", "/misfire")).contains("skip, run-once");
        assertThat(invalid("{'name':'j0','every':'PT1M'}", "/job")).contains("required");
        // the job is checked by the job parser, its problems pointed under /job
        assertThat(invalid("{'name':'j1','every':'PT1M','job':{'template':'no-such'}}", "/job/template")).contains("unknown template");
        assertThat(invalid("{'name':'j2','every':'PT1M','job':{'workload':{'steps':[{'op':'fly'}]}}}", "/job/workload/steps/0/op"))
                .isNotBlank();
        assertThat(invalid("{'name':'j3','every':'PT1M','job':{'template':'ping-pong','notBefore':'2030-01-01T00:00:00Z'}}",
                "/job/notBefore")).contains("ticks say when");
        assertThat(invalid("{'name':'u','every':'PT1M','job':" + JOB + ",'dependsOn':[]}", "/dependsOn")).contains("unknown field");
        // nothing was made by any of them
        JsonNode list = body(http.get().uri("/api/v1/schedules").exchange().expectStatus().isOk());
        assertThat(list.get("items").valueStream().map(i -> i.get("name").stringValue())).doesNotContain("c1", "z", "b", "e1", "j1", "u");
    }

    @Test
    void nextIsBoundedAndOtherParametersAreRefused() {
        post("/api/v1/schedules", "{'name':'bounded','every':'PT1H','job':" + JOB + "}").expectStatus().isCreated();
        http.get().uri("/api/v1/schedules/bounded?next=0").exchange().expectStatus().isEqualTo(422);
        http.get().uri("/api/v1/schedules/bounded?next=101").exchange().expectStatus().isEqualTo(422);
        http.get().uri("/api/v1/schedules/bounded?nxt=3").exchange().expectStatus().isEqualTo(422);
        assertThat(body(http.get().uri("/api/v1/schedules/bounded?next=100").exchange().expectStatus().isOk()).get("nextFireTimes"))
                .hasSize(100);
    }

    @Test
    void putRedefinesAndKeepsTheName() {
        post("/api/v1/schedules", "{'name':'redo','every':'PT1H','job':" + JOB + "}").expectStatus().isCreated();
        JsonNode v = body(put("/api/v1/schedules/redo", "{'cron':'*/5 * * * *','overlap':'allow','job':" + JOB + "}").expectStatus().isOk());
        assertThat(v.get("cron").stringValue()).isEqualTo("*/5 * * * *");
        assertThat(v.has("every")).isFalse();
        assertThat(v.get("overlap").stringValue()).isEqualTo("allow");
        assertThat(Instant.parse(v.get("nextFireAt").stringValue())).isBefore(Instant.now().plus(Duration.ofMinutes(6)));
        put("/api/v1/schedules/redo", "{'name':'other','every':'PT1H','job':" + JOB + "}").expectStatus().isEqualTo(422);
        put("/api/v1/schedules/nobody", "{'every':'PT1H','job':" + JOB + "}").expectStatus().isNotFound();
    }

    @Test
    void pauseResumeAndTrigger() {
        post("/api/v1/schedules", "{'name':'knob','every':'PT1H','job':" + JOB + "}").expectStatus().isCreated();
        JsonNode paused = body(http.post().uri("/api/v1/schedules/knob/pause").exchange().expectStatus().isOk());
        assertThat(paused.get("paused").booleanValue()).isTrue();
        assertThat(paused.has("nextFireAt")).isFalse();
        JsonNode job = body(http.post().uri("/api/v1/schedules/knob/trigger").exchange().expectStatus().isAccepted()
                .expectHeader().valueMatches("Location", "/api/v1/jobs/[0-9a-f-]{36}"));
        assertThat(job.get("schedule").stringValue()).isEqualTo("knob");
        assertThat(job.has("scheduledFor")).isTrue();
        JsonNode v = body(http.get().uri("/api/v1/schedules/knob").exchange().expectStatus().isOk());
        assertThat(v.get("lastJobId").stringValue()).isEqualTo(job.get("id").stringValue());
        assertThat(v.get("lastJobState").stringValue()).isIn("queued", "running", "succeeded");
        assertThat(v.get("lastFireAt").stringValue()).isEqualTo(job.get("scheduledFor").stringValue());
        JsonNode resumed = body(http.post().uri("/api/v1/schedules/knob/resume").exchange().expectStatus().isOk());
        assertThat(resumed.get("paused").booleanValue()).isFalse();
        assertThat(resumed.has("nextFireAt")).isTrue();
        http.post().uri("/api/v1/schedules/nobody/pause").exchange().expectStatus().isNotFound();
        http.post().uri("/api/v1/schedules/nobody/resume").exchange().expectStatus().isNotFound();
        http.post().uri("/api/v1/schedules/nobody/trigger").exchange().expectStatus().isNotFound();
    }

    /** The node's own firing thread, on the real clock: a one-second schedule's jobs appear, each with its tick. */
    @Test
    void aOneSecondScheduleMakesJobsWithTheirTicks() throws InterruptedException {
        post("/api/v1/schedules", "{'name':'live','every':'PT1S','overlap':'allow','job':" + JOB + "}").expectStatus().isCreated();
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        JsonNode v;
        do {
            Thread.sleep(200);
            v = body(http.get().uri("/api/v1/schedules/live").exchange().expectStatus().isOk());
        } while (!(v.has("lastJobState") && v.get("lastJobState").stringValue().equals("succeeded")) && System.nanoTime() < end);
        assertThat(v.get("lastJobState").stringValue()).isEqualTo("succeeded");
        JsonNode job = body(http.get().uri("/api/v1/jobs/" + v.get("lastJobId").stringValue()).exchange().expectStatus().isOk());
        assertThat(job.get("schedule").stringValue()).isEqualTo("live");
        assertThat(job.get("scheduledFor").stringValue()).isEqualTo(v.get("lastFireAt").stringValue());
        assertThat(Instant.parse(job.get("scheduledFor").stringValue()).toEpochMilli() % 1000)
                .isEqualTo(Instant.parse(v.get("createdAt").stringValue()).toEpochMilli() % 1000); // ticks count from creation
        http.delete().uri("/api/v1/schedules/live").exchange().expectStatus().isOk();
    }
}
