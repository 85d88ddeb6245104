package io.gosched.service.http;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * A URL prefix from {@code gosched.jobs.http}, compared by parts rather than as a string, so that
 * {@code https://api.example.com} does not allow {@code https://api.example.com.evil.test/},
 * {@code https://api.example.com@evil.test/}, another port, or a path that climbs out with
 * {@code ..} (the URL is normalized before it is compared).
 */
record UrlPrefix(String text, String scheme, String host, int port, String path) {

    /** @throws IllegalArgumentException when {@code text} is not an absolute http(s) URL with a host */
    static UrlPrefix parse(String text) {
        URI u;
        try {
            u = new URI(text.strip()).normalize();
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("'" + text + "' is not a URL: " + e.getReason());
        }
        String problem = problem(u);
        if (problem != null) {
            throw new IllegalArgumentException("'" + text + "' " + problem);
        }
        String path = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
        return new UrlPrefix(text, u.getScheme().toLowerCase(Locale.ROOT), u.getHost().toLowerCase(Locale.ROOT), port(u), path);
    }

    /** Why {@code u} cannot be called (or be a prefix), or null when it can. */
    static String problem(URI u) {
        if (!u.isAbsolute() || u.getScheme() == null) {
            return "must be an absolute URL (http:// or https://)";
        }
        String scheme = u.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            return "must use http or https, not " + scheme;
        }
        if (u.getHost() == null) {
            return "must name a host";
        }
        if (u.getRawUserInfo() != null) {
            return "must not carry user information (user:password@); send credentials in a header";
        }
        if (u.getRawFragment() != null) {
            return "must not have a fragment (#...)";
        }
        return null;
    }

    static int port(URI u) {
        if (u.getPort() != -1) {
            return u.getPort();
        }
        return u.getScheme().equalsIgnoreCase("https") ? 443 : 80;
    }

    /** True if {@code u} (normalized, checked by {@link #problem}) lies under this prefix. */
    boolean matches(URI u) {
        if (!scheme.equalsIgnoreCase(u.getScheme()) || !host.equalsIgnoreCase(u.getHost()) || port != port(u)) {
            return false;
        }
        String p = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
        if (p.contains("/../") || p.endsWith("/..") || p.startsWith("../")) {
            return false; // normalize() keeps a leading ".." it cannot resolve: never under a prefix
        }
        if (!p.startsWith(path)) {
            return false;
        }
        if (path.endsWith("/") || p.length() == path.length()) {
            return true;
        }
        char next = p.charAt(path.length());
        return next == '/';
    }

    @Override
    public String toString() {
        return text;
    }
}
