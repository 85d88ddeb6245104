package io.gosched.api.security;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Who may call what, by path pattern: the one table the security filter chain enforces and the
 * OpenAPI document describes. Rules are tried in order and the first whose pattern matches wins;
 * a rule gives one {@link Access} to reads ({@code GET}, {@code HEAD}) and one to writes (every
 * other method). {@code OPTIONS} needs both: its answer lists every method the path has, so only a
 * caller who may use them all learns it (browsers' CORS preflights never get this far: the CORS
 * filter answers them first).
 *
 * <p>Patterns are Spring's {@link PathPattern}s, matched against the decoded path without
 * {@code ;} parameters, exactly as the request mappings are: a request that reaches a controller
 * was matched by the same rules. A pattern ending in {@code /**} also matches its own base
 * ({@code /api/v1/jobs/**} matches {@code /api/v1/jobs}), so an endpoint added later under
 * {@code /api/v1/debug}, {@code /api/v1/trace} or {@code /api/v1/jobs/{id}} falls under its
 * prefix's scope without a change here. Anything under {@code /api} no rule names needs
 * {@code scheduler:admin} ({@link Rule#unclassified()}: tests fail on a documented operation that
 * lands there, so each new endpoint gets a deliberate rule). Paths outside the table need
 * authentication and nothing more: no handler serves data there, and an authenticated caller
 * gets an honest 404 for a typo.
 */
public final class AccessRules {

    /** The three kinds of method a rule tells apart. */
    public enum MethodKind {
        /** GET and HEAD: the rule's read access. */
        READ,
        /** OPTIONS: both the read and the write access. */
        OPTIONS,
        /** Every other method: the rule's write access. */
        WRITE;

        public static MethodKind of(HttpMethod method) {
            if (HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method)) {
                return READ;
            }
            return HttpMethod.OPTIONS.equals(method) ? OPTIONS : WRITE;
        }
    }

    /**
     * What a request needs. For {@link Kind#SCOPE}, {@code allOf} lists sets of scopes: the caller
     * must hold at least one scope of every set (one set for every method but OPTIONS).
     */
    public record Access(Kind kind, List<Set<ApiScope>> allOf) {

        /** The three kinds of access. */
        public enum Kind {
            /** Nobody needs credentials. */
            PUBLIC,
            /** Any authenticated caller. */
            AUTHENTICATED,
            /** An authenticated caller holding the scopes {@code allOf} asks for. */
            SCOPE
        }

        public Access {
            allOf = allOf.stream().map(Set::copyOf).distinct().toList();
        }

        public static final Access PUBLIC = new Access(Kind.PUBLIC, List.of());
        public static final Access AUTHENTICATED = new Access(Kind.AUTHENTICATED, List.of());

        static Access scope(ApiScope first, ApiScope... more) {
            return new Access(Kind.SCOPE, List.of(EnumSet.of(first, more)));
        }

        static Access anyScope() {
            return new Access(Kind.SCOPE, List.of(ApiScope.ALL));
        }

        /** Both this and {@code other}: what OPTIONS needs, since its Allow header describes every method. */
        Access and(Access other) {
            if (kind.ordinal() < other.kind.ordinal()) {
                return other.and(this);
            }
            if (other.kind != Kind.SCOPE) {
                return this;
            }
            List<Set<ApiScope>> both = new ArrayList<>(allOf);
            both.addAll(other.allOf);
            return new Access(Kind.SCOPE, both);
        }

        /** Every scope named, in declaration order (for messages that must not change from run to run). */
        public List<ApiScope> scopes() {
            Set<ApiScope> all = EnumSet.noneOf(ApiScope.class);
            allOf.forEach(all::addAll);
            return List.copyOf(all);
        }

        /** Whether a caller holding {@code held} may pass (authentication itself is the chain's business). */
        public boolean allows(Set<ApiScope> held) {
            return switch (kind) {
                case PUBLIC, AUTHENTICATED -> true;
                case SCOPE -> allOf.stream().allMatch(set -> set.stream().anyMatch(held::contains));
            };
        }
    }

    /**
     * One row of the table.
     *
     * @param patterns      the paths it covers
     * @param read          access for GET, HEAD and OPTIONS
     * @param write         access for every other method
     * @param unclassified  true for the catch-all under {@code /api}: no endpoint should rely on it
     */
    public record Rule(List<PathPattern> patterns, Access read, Access write, boolean unclassified) {

        public Access access(HttpMethod method) {
            return access(MethodKind.of(method));
        }

        public Access access(MethodKind kind) {
            return switch (kind) {
                case READ -> read;
                case OPTIONS -> read.and(write);
                case WRITE -> write;
            };
        }

        boolean matches(PathContainer path) {
            for (PathPattern p : patterns) {
                if (p.matches(path)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Where the public documents and the actuator are mounted (Boot and springdoc let users move them). */
    public record Paths(String actuatorBase, String apiDocs, String swaggerUi, String webjars) {

        /** Without a trailing {@code /}: Boot allows {@code management.endpoints.web.base-path=/} for the root. */
        public Paths {
            actuatorBase = trimSlash(actuatorBase);
            apiDocs = trimSlash(apiDocs);
            webjars = trimSlash(webjars);
        }

        private static String trimSlash(String p) {
            return p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
        }

        public static Paths defaults() {
            return new Paths("/actuator", "/v3/api-docs", "/swagger-ui.html", "/webjars");
        }
    }

    private final List<Rule> rules;

    private AccessRules(List<Rule> rules) {
        this.rules = List.copyOf(rules);
    }

    /**
     * The service's table.
     *
     * @param paths             where the actuator and the API documents are
     * @param prometheusPublic  whether {@code /actuator/prometheus} is open to scrapers without a token
     */
    public static AccessRules of(Paths paths, boolean prometheusPublic) {
        List<Rule> r = new ArrayList<>();
        // Public on purpose: liveness and readiness for orchestrators, the API description, and the
        // live page's own files (its data comes through /api/v1 under the rules below).
        publicReads(r, paths.actuatorBase() + "/health/**");
        publicReads(r, paths.apiDocs() + "/**", paths.apiDocs() + ".yaml", paths.swaggerUi(), "/swagger-ui/**",
                paths.webjars() + "/swagger-ui/**");
        publicReads(r, "/", "/*.html", "/*.js", "/*.css", "/*.ico", "/*.png", "/*.svg");
        // The scheduler's statistics are what /actuator/prometheus shows: any client of the service may read them.
        Access stats = Access.anyScope();
        if (prometheusPublic) {
            publicReads(r, paths.actuatorBase() + "/prometheus");
        } else {
            r.add(rule(stats, Access.scope(ApiScope.SCHEDULER_ADMIN), paths.actuatorBase() + "/prometheus"));
        }
        r.add(rule(Access.scope(ApiScope.SCHEDULER_ADMIN), Access.scope(ApiScope.SCHEDULER_ADMIN), paths.actuatorBase() + "/**"));

        r.add(rule(Access.scope(ApiScope.JOBS_READ), Access.scope(ApiScope.JOBS_WRITE), "/api/v1/jobs/**", "/api/v1/workloads/**",
                "/api/v1/schedules/**", "/api/v1/handlers"));
        // A select's cases are receives and sends, both writes: it needs what each of them needs alone.
        r.add(rule(Access.scope(ApiScope.CHANNELS_READ), Access.scope(ApiScope.CHANNELS_WRITE), "/api/v1/channels/**", "/api/v1/select"));
        // The memory budget's use is a statistic like the others: any client may see how full it is.
        r.add(rule(stats, Access.scope(ApiScope.SCHEDULER_ADMIN), "/api/v1/scheduler", "/api/v1/telemetry/**", "/api/v1/limits"));
        r.add(rule(Access.scope(ApiScope.SCHEDULER_ADMIN), Access.scope(ApiScope.SCHEDULER_ADMIN),
                "/api/v1/scheduler/**", "/api/v1/trace/**", "/api/v1/debug/**"));
        r.add(new Rule(parse("/api/**"), Access.scope(ApiScope.SCHEDULER_ADMIN), Access.scope(ApiScope.SCHEDULER_ADMIN), true));
        return new AccessRules(r);
    }

    public List<Rule> rules() {
        return rules;
    }

    /** The first rule covering {@code path}, if any. */
    public Optional<Rule> ruleFor(PathContainer path) {
        for (Rule rule : rules) {
            if (rule.matches(path)) {
                return Optional.of(rule);
            }
        }
        return Optional.empty();
    }

    /** What {@code method path} needs; {@code path} as the request carries it (decoded and matched like the router does). */
    public Access accessFor(HttpMethod method, PathContainer path) {
        return ruleFor(path).map(rule -> rule.access(method)).orElse(Access.AUTHENTICATED);
    }

    /** The same for a path given as text, e.g. an OpenAPI path with its variables filled in. */
    public Access accessFor(HttpMethod method, String path) {
        return accessFor(method, PathContainer.parsePath(path));
    }

    private static void publicReads(List<Rule> r, String... patterns) {
        r.add(rule(Access.PUBLIC, Access.AUTHENTICATED, patterns));
    }

    private static Rule rule(Access read, Access write, String... patterns) {
        return new Rule(parse(patterns), read, write, false);
    }

    private static List<PathPattern> parse(String... patterns) {
        PathPatternParser parser = PathPatternParser.defaultInstance;
        List<PathPattern> out = new ArrayList<>();
        for (String p : patterns) {
            out.add(parser.parse(parser.initFullPathPattern(p)));
        }
        return out;
    }
}
