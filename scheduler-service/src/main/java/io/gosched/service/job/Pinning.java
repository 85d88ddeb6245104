package io.gosched.service.job;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.gosched.service.channel.ChannelRegistry;
import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.Violation;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.workload.Step;
import io.gosched.service.workload.Workload;

/**
 * Where a job must run: on the home of its shared channels (in a cluster a channel's
 * {@code Chan} exists on one node only), written into its tickets ({@code JobTicket.node}) so
 * that only that node pulls them. Thread-safe; a lookup may read the channel directory.
 */
final class Pinning {

    private final ChannelRegistry channels;
    private final ChannelDirectory directory;
    private final JobNode node;
    private final JobSpecs specs;

    Pinning(ChannelRegistry channels, ChannelDirectory directory, JobNode node, JobSpecs specs) {
        this.channels = channels;
        this.directory = directory;
        this.node = node;
        this.specs = specs;
    }

    /**
     * The node a job must run on: the home of its shared channels (the {@code Chan} exists only
     * there). An invalid request when the workload's channels live on different nodes: a run needs every one of
     * its channels in its own process, and a blocking select across homes could not be atomic.
     */
    String pin(Workload w) {
        if (w.sharedChannels().isEmpty()) {
            return null;
        }
        Map<String, String> homes = new LinkedHashMap<>();
        List<Violation> missing = new ArrayList<>();
        w.sharedChannels().forEach((name, pointer) -> {
            String home = directory.home(name).map(ChannelHome::node).orElse(null);
            if (home == null && channels.lookup(name) != null) {
                home = node.id();
            }
            if (home == null) {
                missing.add(new Violation(pointer, "unknown channel '" + name
                        + "': create it with POST /api/v1/channels or declare it in the workload's 'channels'"));
            } else {
                homes.put(name, home);
            }
        });
        if (!missing.isEmpty()) {
            throw new InvalidRequestException(missing);
        }
        Set<String> distinct = new TreeSet<>(homes.values());
        if (distinct.size() == 1) {
            return distinct.iterator().next();
        }
        List<Violation> v = new ArrayList<>();
        for (Step.Select sel : blockingSelects(w.steps(), new ArrayList<>())) {
            Map<String, String> caseHomes = new LinkedHashMap<>();
            for (Step.Case c : sel.cases()) {
                if (homes.containsKey(c.channel())) {
                    caseHomes.put(c.channel(), homes.get(c.channel()));
                }
            }
            if (new TreeSet<>(caseHomes.values()).size() > 1) {
                v.add(new Violation(sel.pointer(), "a blocking select over channels that live on different nodes ("
                        + describe(caseHomes) + ") cannot be atomic across nodes: Go's select commits to one case with all its"
                        + " channels locked at once; keep the channels on one node (create them there) or add a default case"));
            }
        }
        if (v.isEmpty()) {
            v.add(new Violation("/workload", "the workload's shared channels live on different nodes (" + describe(homes)
                    + "); a job runs on its channels' home, so they must all live on one node"));
        }
        throw new InvalidRequestException(v);
    }

    private static String describe(Map<String, String> homes) {
        StringBuilder b = new StringBuilder();
        homes.forEach((name, home) -> b.append(b.isEmpty() ? "" : ", ").append('\'').append(name).append("' on ").append(home));
        return b.toString();
    }

    private static List<Step.Select> blockingSelects(List<Step> steps, List<Step.Select> out) {
        for (Step s : steps) {
            switch (s) {
                case Step.Select sel when !sel.hasDefault() -> out.add(sel);
                case Step.Spawn sp -> blockingSelects(sp.steps(), out);
                case Step.Loop l -> blockingSelects(l.steps(), out);
                default -> { }
            }
        }
        return out;
    }

    /** The node a record's ticket is pinned to, as at submission (channel homes do not move); null if none or unknown now. */
    String pinQuietly(JobRecord r) {
        try {
            return pin(specs.parse(r.spec()).workload());
        } catch (RuntimeException e) {
            return null;
        }
    }
}
