package io.gosched.service.http;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The allowed targets and their limits, parsed once from {@link HttpJobProperties}. A call's
 * limits and its {@code target} tag (bounded: one per configured prefix) come from the first
 * matching entry.
 *
 * <p>Immutable after construction, apart from the limits' own state; thread-safe.
 */
public final class HttpTargets {

    /** The configuration property that switches HTTP jobs on, named in every refusal. */
    public static final String ALLOWED_TARGETS = "gosched.jobs.http.allowed-targets";

    private final List<UrlPrefix> allowed = new ArrayList<>();
    private final List<Limited> limited = new ArrayList<>();

    /** A target with limits: its prefix and the semaphore and pacing every call to it shares. */
    record Limited(UrlPrefix prefix, TargetLimits limits) {}

    /** @throws IllegalArgumentException naming the property whose URL is not usable */
    public HttpTargets(HttpJobProperties properties) {
        for (int i = 0; i < properties.allowedTargets().size(); i++) {
            try {
                allowed.add(UrlPrefix.parse(properties.allowedTargets().get(i)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(ALLOWED_TARGETS + "[" + i + "]: " + e.getMessage(), e);
            }
        }
        for (int i = 0; i < properties.targets().size(); i++) {
            HttpJobProperties.Target t = properties.targets().get(i);
            try {
                limited.add(new Limited(UrlPrefix.parse(t.url()), new TargetLimits(t.maxConcurrent(), t.maxPerSecond())));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("gosched.jobs.http.targets[" + i + "].url: " + e.getMessage(), e);
            }
        }
    }

    /** True if no target is allowed: HTTP jobs are off. */
    public boolean off() {
        return allowed.isEmpty();
    }

    /**
     * Why {@code url} may not be called, or empty when it may. The answer names the property, so
     * that whoever reads the refusal knows what an operator would change.
     */
    public Optional<String> refusal(URI url) {
        String problem = UrlPrefix.problem(url);
        if (problem != null) {
            return Optional.of(problem);
        }
        if (allowed.isEmpty()) {
            return Optional.of("HTTP jobs are off: no target is allowed until " + ALLOWED_TARGETS + " lists URL prefixes");
        }
        if (prefixOf(url) == null) {
            return Optional.of("is not under any prefix of " + ALLOWED_TARGETS);
        }
        return Optional.empty();
    }

    /** The allowed prefix {@code url} lies under (the {@code target} tag of its meters), or null. */
    UrlPrefix prefixOf(URI url) {
        for (UrlPrefix p : allowed) {
            if (p.matches(url)) {
                return p;
            }
        }
        return null;
    }

    /** The limits of calls to {@code url}, or {@link TargetLimits#NONE}. */
    TargetLimits limitsOf(URI url) {
        for (Limited l : limited) {
            if (l.prefix().matches(url)) {
                return l.limits();
            }
        }
        return TargetLimits.NONE;
    }
}
