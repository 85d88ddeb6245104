package io.gosched.service.workload;

import io.gosched.service.workload.WorkloadTemplates;

import io.gosched.service.workload.WorkloadParser;

import io.gosched.service.workload.Workload;

import io.gosched.service.workload.Step;

import io.gosched.service.workload.JsonInput;

import io.gosched.service.error.InvalidRequestException;

import io.gosched.service.error.Violation;

import java.util.List;
import java.util.Map;

import io.gosched.service.testing.TestProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WorkloadParserTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    final WorkloadParser parser = new WorkloadParser(TestProperties.service(Map.of()).limits());

    static JsonNode json(String s) {
        return JSON.readTree(s.replace('\'', '"'));
    }

    List<Violation> violations(String body) {
        try {
            parser.parse(json(body), "");
            throw new AssertionError("expected violations for " + body);
        } catch (InvalidRequestException e) {
            return e.violations();
        }
    }

    @Test
    void parsesEveryOp() {
        Workload w = parser.parse(json("""
                {'channels':[{'name':'c','capacity':2}],
                 'steps':[{'op':'compute','us':10},{'op':'hog','us':10},{'op':'sleep','ms':1},{'op':'yield'},
                          {'op':'spawn','count':3,'steps':[{'op':'send','channel':'c','value':{'a':[1]},'times':2}]},
                          {'op':'wait'},{'op':'recv','channel':'c','times':6},
                          {'op':'select','cases':[{'recv':'c'},{'send':'shared','value':null}],'default':true},
                          {'op':'syscall','ms':1},{'op':'loop','times':2,'steps':[{'op':'yield'}]},{'op':'close','channel':'c'}]}
                """), "");
        assertThat(w.steps()).hasSize(11);
        assertThat(w.goroutines()).isEqualTo(4);
        assertThat(w.channels()).containsExactly(new Workload.ChannelDecl("c", 2));
        assertThat(w.sharedChannels()).containsOnlyKeys("shared");
        assertThat(w.sharedChannels().get("shared")).isEqualTo("/steps/7/cases/1/send");
        Step.Spawn spawn = (Step.Spawn) w.steps().get(4);
        assertThat(((Step.Send) spawn.steps().getFirst()).value()).isEqualTo(json("{'a':[1]}"));
        Step.Select sel = (Step.Select) w.steps().get(7);
        assertThat(sel.hasDefault()).isTrue();
        assertThat(sel.cases().get(1).isSend()).as("a JSON null value is still a send").isTrue();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', textBlock = """
            {'steps':[{'op':'fly'}]}                                   | /steps/0/op       | unknown op
            {'steps':[{'op':'compute'}]}                               | /steps/0/us       | is required
            {'steps':[{'op':'compute','us':'5'}]}                      | /steps/0/us       | must be an integer
            {'steps':[{'op':'compute','us':1.5}]}                      | /steps/0/us       | must be an integer
            {'steps':[{'op':'compute','us':0}]}                        | /steps/0/us       | between 1 and 1000000
            {'steps':[{'op':'compute','us':99999999999999999999}]}     | /steps/0/us       | at most 9223372036854775807
            {'steps':[{'op':'hog','us':50001}]}                        | /steps/0/us       | between 1 and 50000
            {'steps':[{'op':'sleep','ms':-1}]}                         | /steps/0/ms       | between 0 and 60000
            {'steps':[{'op':'yield','x':1}]}                           | /steps/0/x        | unknown field
            {'steps':[{'op':'loop','times':100001,'steps':[{'op':'yield'}]}]} | /steps/0/times | between 1 and 100000
            {'steps':[{'op':'send','channel':'a b','value':1}]}        | /steps/0/channel  | must match
            {'steps':[{'op':'send','channel':'a'}]}                    | /steps/0/value    | is required
            {'steps':[{'op':'select','cases':[{'recv':'a','send':'b'}]}]} | /steps/0/cases/0 | exactly one
            {'steps':[{'op':'select','cases':[]}]}                     | /steps/0/cases    | between 1 and 64
            {'steps':[]}                                               | /steps            | between 1 and 1000
            {'steps':{}}                                               | /steps            | must be an array
            {'steps':[1]}                                              | /steps/0          | must be a JSON object
            {}                                                         | /steps            | is required
            {'steps':[{'op':'yield'}],'extra':1}                       | /extra            | unknown field
            {'channels':[{'name':'c'},{'name':'c'}],'steps':[{'op':'yield'}]} | /channels/1/name | declared twice
            {'channels':[{'name':'c','capacity':100001}],'steps':[{'op':'yield'}]} | /channels/0/capacity | between 0 and 100000
            {'steps':[{'op':'spawn','count':1000,'steps':[{'op':'spawn','count':1000,'steps':[{'op':'yield'}]}]}]} | /steps/0/steps/0/count | goroutines in all
            {'steps':[{'op':'loop','times':100000,'steps':[{'op':'loop','times':100000,'steps':[{'op':'spawn','count':10000,'steps':[{'op':'yield'}]}]}]}]} | /steps/0/steps/0/steps/0/count | would start 100000000000001 goroutines
            {'steps':[{'op':'yield','a/b~c':1}]}                       | /steps/0/a~1b~0c  | unknown field
            """)
    void namesTheOffendingField(String body, String pointer, String detail) {
        List<Violation> vs = violations(body);
        assertThat(vs).as("violations of %s", body).anySatisfy(v -> {
            assertThat(v.pointer()).isEqualTo(pointer);
            assertThat(v.detail()).contains(detail);
        });
    }

    @Test
    void reportsEveryViolationNotJustTheFirst() {
        List<Violation> vs = violations("{'steps':[{'op':'compute','us':-1},{'op':'sleep'},{'op':'nope'}]}");
        assertThat(vs).extracting(Violation::pointer).containsExactly("/steps/0/us", "/steps/1/ms", "/steps/2/op");
    }

    @Test
    void refusesNestingDeeperThanTheLimit() {
        String step = "{'op':'yield'}";
        for (int i = 0; i < 9; i++) {
            step = "{'op':'loop','times':1,'steps':[" + step + "]}";
        }
        List<Violation> vs = violations("{'steps':[" + step + "]}");
        assertThat(vs).singleElement().satisfies(v -> {
            assertThat(v.detail()).contains("deeper than the limit of 8");
            assertThat(v.pointer()).isEqualTo("/steps/0" + "/steps/0".repeat(7) + "/steps");
        });
    }

    @Test
    void refusesTooManyStepsInAll() {
        StringBuilder sb = new StringBuilder("{'steps':[");
        for (int i = 0; i < 40; i++) {
            sb.append(i == 0 ? "" : ",").append("{'op':'loop','times':1,'steps':[");
            for (int j = 0; j < 30; j++) {
                sb.append(j == 0 ? "" : ",").append("{'op':'yield'}");
            }
            sb.append("]}");
        }
        List<Violation> vs = violations(sb.append("]}").toString());
        assertThat(vs).anySatisfy(v -> assertThat(v.detail()).contains("more than the limit of 1000"));
    }

    @Test
    void countsGoroutinesThroughLoopsAndSpawns() {
        Workload w = parser.parse(json("""
                {'steps':[{'op':'loop','times':10,'steps':[{'op':'spawn','count':5,'steps':[
                    {'op':'spawn','count':2,'steps':[{'op':'yield'}]}]}]}]}"""), "");
        assertThat(w.goroutines()).isEqualTo(1 + 10 * 5 + 10 * 5 * 2);
    }

    @Test
    void everyTemplateExpandsToAValidWorkloadWithItsDefaults() {
        WorkloadTemplates templates = new WorkloadTemplates();
        assertThat(templates.list()).extracting(WorkloadTemplates.Template::name)
                .containsExactly("ping-pong", "fan-out-fan-in", "pipeline", "timer-storm", "hog-vs-ticker");
        for (WorkloadTemplates.Template t : templates.list()) {
            JsonInput in = new JsonInput();
            JsonNode expanded = templates.expand(t.name(), null, "/params", in);
            assertThat(in.violations()).as(t.name()).isEmpty();
            Workload w = parser.parse(expanded, "");
            assertThat(w.sharedChannels()).as("%s uses only its own channels", t.name()).isEmpty();
        }
    }

    @Test
    void templateParamsAreCheckedWithPointers() {
        JsonInput in = new JsonInput();
        new WorkloadTemplates().expand("ping-pong", json("{'rounds':0,'x':1}"), "/params", in);
        assertThat(in.violations()).extracting(Violation::pointer).containsExactlyInAnyOrder("/params/rounds", "/params/x");
    }

    @Test
    void aNonObjectBodyIsOneViolationAtTheRoot() {
        assertThatThrownBy(() -> parser.parse(json("[1,2]"), "/workload"))
                .isInstanceOfSatisfying(InvalidRequestException.class, e ->
                        assertThat(e.violations()).containsExactly(new Violation("/workload", "must be a JSON object, was an array")));
    }
}
