package io.gosched.service.workload;

import io.gosched.service.workload.WorkloadParser;

import io.gosched.service.workload.Workload;

import io.gosched.service.workload.Run;

import io.gosched.service.workload.Interpreter;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.service.testing.TestProperties;
import io.gosched.context.CancelContext;
import io.gosched.context.Context;
import io.gosched.runtime.Chan;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.testing.Await;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The DSL interpreter on its own: a parsed workload run as goroutines of a real runtime, with the
 * counters, the first failure and cancellation the job service reads from the {@link Run}.
 * Where a broken interpreter would hang (a goroutine that ignores the run's cancellation, a parent
 * that does not wait for its children), the JUnit default timeout is the failure.
 */
class InterpreterTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    final WorkloadParser parser = new WorkloadParser(TestProperties.service(Map.of()).limits());
    final Interpreter interpreter = new Interpreter();
    final GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());

    @AfterEach
    void close() {
        rt.close();
    }

    static JsonNode json(String s) {
        return JSON.readTree(s.replace('\'', '"'));
    }

    /** A run of the workload's own channels (none shared) under a fresh cancellable context. */
    Run runOf(Workload w, Map<String, Chan<Object>> shared) {
        Map<String, Chan<Object>> chans = new HashMap<>(shared);
        w.channels().forEach(d -> chans.put(d.name(), Chan.make(d.capacity())));
        return new Run(Context.withCancel(Context.background()), chans);
    }

    Run run(String workload) throws Exception {
        Workload w = parser.parse(json(workload), "");
        Run run = runOf(w, Map.of());
        rt.run(() -> {
            interpreter.run(w, run);
            return null;
        });
        return run;
    }

    @Test
    void countsStepsGoroutinesAndMessagesAndLeavesNoGoroutineBehind() throws Exception {
        Run run = run("""
                {'channels':[{'name':'c','capacity':2}],
                 'steps':[{'op':'spawn','count':3,'steps':[{'op':'send','channel':'c','value':{'n':7},'times':2}]},
                          {'op':'recv','channel':'c','times':6},
                          {'op':'wait'}]}
                """);
        assertThat(run.failure()).isNull();
        assertThat(run.goroutinesSpawned()).isEqualTo(3);
        assertThat(run.messagesSent()).isEqualTo(6);
        assertThat(run.messagesReceived()).isEqualTo(6);
        assertThat(run.stepsRun()).as("3 steps of main, 1 of each child").isEqualTo(6);
        assertThat(run.lastReceived()).isEqualTo(json("{'n':7}"));
        assertThat(run.liveGoroutines()).isZero();
    }

    @Test
    void aParentWaitsForItsChildrenBeforeItEnds() throws Exception {
        // No wait step: the implicit wg.Wait() at the end of each goroutine still holds the run open.
        Run run = run("""
                {'steps':[{'op':'spawn','count':4,'steps':[{'op':'sleep','ms':20},{'op':'spawn','count':2,'steps':[{'op':'yield'}]}]}]}
                """);
        assertThat(run.goroutinesSpawned()).isEqualTo(4 + 4 * 2);
        assertThat(run.stepsRun()).as("1 + 4 * 2 + 8 * 1").isEqualTo(17);
        assertThat(run.liveGoroutines()).isZero();
    }

    @Test
    void loopsRepeatTheirStepsAndSelectTakesDefaultWhenNothingIsReady() throws Exception {
        Run run = run("""
                {'channels':[{'name':'c','capacity':1}],
                 'steps':[{'op':'select','cases':[{'recv':'c'}],'default':true},
                          {'op':'loop','times':5,'steps':[{'op':'yield'}]},
                          {'op':'send','channel':'c','value':1},
                          {'op':'select','cases':[{'recv':'c'}],'default':true}]}
                """);
        assertThat(run.failure()).isNull();
        assertThat(run.messagesReceived()).as("only the second select found a value").isEqualTo(1);
        assertThat(run.stepsRun()).as("4 top-level steps and 5 yields").isEqualTo(9);
    }

    @Test
    void theFirstFailureIsNamedByItsPointerAndCancelsEveryOtherGoroutine() throws Exception {
        // The child waits on a channel nobody sends on: only the run's cancellation ends it.
        Run run = run("""
                {'channels':[{'name':'never','capacity':0},{'name':'c','capacity':0},{'name':'after','capacity':5}],
                 'steps':[{'op':'spawn','count':2,'steps':[{'op':'recv','channel':'never'}]},
                          {'op':'close','channel':'c'},
                          {'op':'close','channel':'c'},
                          {'op':'send','channel':'after','value':1}]}
                """);
        assertThat(run.failure()).isNotNull();
        assertThat(run.failure().pointer()).isEqualTo("/steps/2");
        assertThat(run.failure().detail()).contains("closed");
        assertThat(run.context().err()).as("the failure cancelled the run").isNotNull();
        assertThat(run.messagesSent()).as("the step after the failure did not run").isZero();
        assertThat(run.liveGoroutines()).isZero();
    }

    @Test
    void cancellingTheContextEndsComputeSleepAndReceiveWithoutAFailure() throws Exception {
        Workload w = parser.parse(json("""
                {'channels':[{'name':'never','capacity':0}],
                 'steps':[{'op':'spawn','count':1,'steps':[{'op':'loop','times':100000,'steps':[{'op':'compute','us':1000}]}]},
                          {'op':'spawn','count':1,'steps':[{'op':'sleep','ms':60000}]},
                          {'op':'spawn','count':1,'steps':[{'op':'recv','channel':'never'}]},
                          {'op':'wait'}]}
                """), "");
        Run run = runOf(w, Map.of());
        CompletableFuture<Void> done = new CompletableFuture<>();
        rt.go(() -> {
            interpreter.run(w, run);
            done.complete(null);
        });
        Await.until("main to spawn its children and wait", Duration.ofSeconds(30),
                () -> run.liveGoroutines() == 4 && run.stepsRun() >= 4);
        assertThat(done).isNotDone();
        ((CancelContext) run.context()).cancel();
        done.get(60, TimeUnit.SECONDS);
        assertThat(run.failure()).as("a cancelled run reports no failure of its own").isNull();
        assertThat(run.liveGoroutines()).isZero();
    }

    @Test
    void aSharedChannelIsTheSameChannelOtherClientsUse() throws Exception {
        Chan<Object> shared = Chan.make(4);
        Workload w = parser.parse(json("{'steps':[{'op':'send','channel':'shared','value':'hi','times':3}]}"), "");
        assertThat(w.sharedChannels()).containsOnlyKeys("shared");
        Run run = runOf(w, Map.of("shared", shared));
        rt.run(() -> {
            interpreter.run(w, run);
            return null;
        });
        assertThat(shared.len()).isEqualTo(3);
        assertThat(shared.tryRecv().value()).isEqualTo(JSON.readTree("\"hi\""));
    }
}
