import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.openapitools.client.ApiClient;
import org.openapitools.client.ApiException;
import org.openapitools.client.api.ChannelsApi;
import org.openapitools.client.api.JobsApi;
import org.openapitools.client.api.SchedulerApi;
import org.openapitools.client.model.ChannelView;
import org.openapitools.client.model.CreateChannel;
import org.openapitools.client.model.JobPage;
import org.openapitools.client.model.JobResultView;
import org.openapitools.client.model.JobSubmission;
import org.openapitools.client.model.JobView;
import org.openapitools.client.model.RecvRequest;
import org.openapitools.client.model.RecvResult;
import org.openapitools.client.model.SendRequest;
import org.openapitools.client.model.SendResult;
import org.openapitools.client.model.SetGomaxprocs;

/**
 * The README's job and channel flows, written against the Java client OpenAPI Generator makes
 * from the served document (java, native library, no options): compiled with that client and run
 * against the service by GeneratedJavaClientTest. Every check throws AssertionError naming what
 * differed; the returned lines say what was done.
 */
public final class JavaClientFlows {

    public static List<String> run(String baseUri, String token) throws Exception {
        ApiClient client = new ApiClient();
        client.updateBaseUri(baseUri);
        if (token != null) {
            client.setRequestInterceptor(b -> b.header("Authorization", "Bearer " + token));
        }
        List<String> done = new ArrayList<>();
        JobsApi jobs = new JobsApi(client);
        ChannelsApi channels = new ChannelsApi(client);

        // A job from a template, then its state and result.
        JobView submitted = jobs.submitJob(new JobSubmission().template("fan-out-fan-in").params(Map.of("workers", 8)), null);
        check(submitted.getId() != null && submitted.getState() != null, "a submitted job has an id and a state: " + submitted);
        JobView got = jobs.getJob(submitted.getId());
        check(got.getId().equals(submitted.getId()), "getJob answers the job asked for");
        JobResultView result = awaitFinal(jobs, submitted.getId());
        check(result.getState() == JobResultView.StateEnum.SUCCEEDED, "the template job succeeded: " + result);
        done.add("template job " + submitted.getId() + " " + result.getState());

        // A job in the DSL: 100 goroutines each computing 200 µs, then wait for them.
        Map<String, Object> spawn = new LinkedHashMap<>();
        spawn.put("op", "spawn");
        spawn.put("count", 100);
        spawn.put("steps", List.of(Map.of("op", "compute", "us", 200)));
        JobView dsl = jobs.submitJob(new JobSubmission().workload(Map.of("steps", List.of(spawn, Map.of("op", "wait")))), null);
        JobResultView dslResult = awaitFinal(jobs, dsl.getId());
        check(dslResult.getState() == JobResultView.StateEnum.SUCCEEDED, "the DSL job succeeded: " + dslResult);
        JobView dslDone = jobs.getJob(dsl.getId());
        check(dslDone.getCounters().getGoroutinesSpawned() >= 100, "the DSL job spawned its 100 goroutines: " + dslDone.getCounters());
        done.add("DSL job " + dsl.getId() + " " + dslResult.getState() + ", spawned " + dslDone.getCounters().getGoroutinesSpawned());

        JobPage page = jobs.listJobs("succeeded", null, null, null, null, 0, 50);
        check(page.getItems().stream().anyMatch(j -> j.getId().equals(dsl.getId())), "listJobs(succeeded) holds the DSL job");
        done.add("listJobs: " + page.getItems().size() + " succeeded");

        // Named channels: numbers, strings, objects, arrays and null, each sent and received back.
        ChannelView c = channels.createChannel(new CreateChannel().name("java-client").capacity(1));
        check("java-client".equals(c.getName()) && c.getCapacity() == 1, "createChannel: " + c);
        Map<String, Object> object = new LinkedHashMap<>();
        object.put("n", 1);
        object.put("nested", Map.of("list", List.of("a", 2)));
        List<Object> values = new ArrayList<>();
        values.add(42);
        values.add(1.5);
        values.add("text");
        values.add(object);
        values.add(List.of(true, 1.5));
        values.add(null);
        for (Object v : values) {
            SendResult sent = channels.sendToChannel("java-client", new SendRequest().value(v).timeoutMs(1000L));
            check(Boolean.TRUE.equals(sent.getSent()), "sent " + v + ": " + sent);
            RecvResult got2 = channels.receiveFromChannel("java-client", new RecvRequest().timeoutMs(1000L));
            check(Boolean.TRUE.equals(got2.getReceived()) && Boolean.TRUE.equals(got2.getOk()), "received " + v + ": " + got2);
            check(same(v, got2.getValue()), "what was sent comes back: sent " + v + ", received " + got2.getValue()
                    + (got2.getValue() == null ? "" : " (" + got2.getValue().getClass().getName() + ")"));
            done.add("channel round trip of " + v);
        }
        RecvResult empty = channels.receiveFromChannel("java-client", new RecvRequest().timeoutMs(10L));
        check(Boolean.FALSE.equals(empty.getReceived()) && "timeout".equals(empty.getReason()), "an empty channel times out: " + empty);
        check(channels.listChannels().stream().anyMatch(ch -> ch.getName().equals("java-client")), "listChannels holds the channel");
        check(channels.getChannel("java-client").getLen() == 0, "getChannel: empty");
        channels.closeChannel("java-client");
        RecvResult closed = channels.receiveFromChannel("java-client", null);
        check(Boolean.TRUE.equals(closed.getReceived()) && Boolean.FALSE.equals(closed.getOk()), "a closed channel answers ok=false: " + closed);
        try {
            channels.sendToChannel("java-client", new SendRequest().value(1));
            throw new AssertionError("a send on a closed channel was not refused");
        } catch (ApiException e) {
            check(e.getCode() == 409 && e.getResponseBody().contains("urn:gosched:problem:channel-closed"),
                    "a send on a closed channel is 409 channel-closed: " + e.getCode() + " " + e.getResponseBody());
        }
        channels.deleteChannel("java-client");
        try {
            channels.getChannel("java-client");
            throw new AssertionError("a deleted channel was still found");
        } catch (ApiException e) {
            check(e.getCode() == 404, "a deleted channel is 404: " + e.getCode());
        }
        done.add("channel closed, drained and deleted");

        // The scheduler.
        SchedulerApi scheduler = new SchedulerApi(client);
        int before = scheduler.getScheduler().getConfig().getGomaxprocs();
        check(scheduler.setGomaxprocs(new SetGomaxprocs().gomaxprocs(before)).getPrevious() == before, "setGomaxprocs answers the previous value");
        done.add("gomaxprocs " + before);
        return done;
    }

    private static JobResultView awaitFinal(JobsApi jobs, String id) throws Exception {
        for (int i = 0; i < 1200; i++) {
            JobResultView r = jobs.getJobResult(id);
            if (r.getState() != JobResultView.StateEnum.QUEUED && r.getState() != JobResultView.StateEnum.RUNNING) {
                return r;
            }
            Thread.sleep(25);
        }
        throw new AssertionError("job " + id + " not final after 30 s");
    }

    /** JSON equality: numbers by value (the client reads 1.5 as a Double or BigDecimal), containers member by member. */
    private static boolean same(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            return new BigDecimal(x.toString()).compareTo(new BigDecimal(y.toString())) == 0;
        }
        if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
            return x.size() == y.size() && x.entrySet().stream().allMatch(e -> y.containsKey(e.getKey()) && same(e.getValue(), y.get(e.getKey())));
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if (x.size() != y.size()) {
                return false;
            }
            for (int i = 0; i < x.size(); i++) {
                if (!same(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return Objects.equals(a, b);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
