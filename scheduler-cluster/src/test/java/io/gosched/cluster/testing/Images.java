package io.gosched.cluster.testing;

import org.testcontainers.utility.DockerImageName;

/**
 * The images the container tests run: the official ones, unless a system property or the
 * environment names others. Where no image registry is reachable (CI), {@code scripts/local-images.sh}
 * builds local stand-ins from Debian packages and prints their names as these variables; a local
 * build is never tagged with an official name.
 */
public final class Images {

    private Images() {}

    /** NATS with JetStream: the official image of the version Debian's package (and CI) runs. */
    public static DockerImageName nats() {
        return DockerImageName.parse(name("nats", "nats:2.9.10"));
    }

    /** Prometheus, as in docker-compose.yml. */
    public static DockerImageName prometheus() {
        return DockerImageName.parse(name("prometheus", "prom/prometheus:v2.53.0"));
    }

    /** The project's own image, as docker-compose.yml names it; built from the Dockerfile where absent. */
    public static String gosched() {
        return name("gosched", "gosched:local");
    }

    /** Whether the environment or a property named the project's image (CI does: it is built before the tests). */
    public static boolean goschedNamed() {
        return given("gosched") != null;
    }

    /** The JDK image the Dockerfile builds on (its build argument JDK_IMAGE). */
    public static String jdk() {
        return name("jdk", "eclipse-temurin:25-jdk");
    }

    /** The base of the image's runtime layer (the Dockerfile's build argument BASE_IMAGE). */
    public static String base() {
        return name("base", "debian:bookworm-slim");
    }

    /**
     * The image for {@code what}: the system property {@code gosched.image.<what>}, else the
     * environment variable {@code GOSCHED_<WHAT>_IMAGE} (for the project's own, {@code GOSCHED_IMAGE}),
     * else the default.
     */
    public static String name(String what, String fallback) {
        String given = given(what);
        return given != null ? given : fallback;
    }

    /** The environment variable that names the image for {@code what}, as the compose files read it. */
    public static String variable(String what) {
        return what.equals("gosched") ? "GOSCHED_IMAGE" : "GOSCHED_" + what.toUpperCase(java.util.Locale.ROOT) + "_IMAGE";
    }

    private static String given(String what) {
        String property = System.getProperty("gosched.image." + what);
        if (property != null && !property.isBlank()) {
            return property;
        }
        String env = System.getenv(variable(what));
        return env != null && !env.isBlank() ? env : null;
    }
}
