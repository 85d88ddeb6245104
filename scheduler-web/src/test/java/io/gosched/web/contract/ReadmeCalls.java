package io.gosched.web.contract;

import io.gosched.web.deploy.Dashboard;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The calls a newcomer makes from the README, as {@code curl} lines: read from README.md's HTTP
 * API block as written there, and made through a base URL (a validating proxy) with or without a
 * token. {@code <id>} in a line is the id of the job the previous submission made.
 */
final class ReadmeCalls {

    /** One curl line: its method, path (with query), headers and body. */
    record Curl(String method, String path, Map<String, String> headers, String body, String line) {

        /** A stream that never ends by itself (the telemetry stream): no proxy that reads whole answers can check it. */
        boolean endless() {
            return path.startsWith("/api/v1/telemetry/stream");
        }
    }

    /** One answer: what was asked, what came back, and what the proxy found wrong (empty: nothing). */
    record Answer(String call, int status, String contentType, String body, String violations) {
        boolean mismatch() {
            return !violations.isEmpty();
        }
    }

    private static final Pattern URL = Pattern.compile("^'?(?:https?://)?localhost:8080(/[^'\\s]*)'?$");

    private ReadmeCalls() {
    }

    /** The curl lines of the first {@code ```bash} block after {@code heading} in README.md. */
    static List<Curl> readme(String heading) throws IOException {
        String text = Files.readString(Dashboard.repoRoot().resolve("README.md"));
        int h = text.indexOf("\n" + heading);
        if (h < 0) {
            throw new IllegalStateException("README.md has no heading " + heading);
        }
        int start = text.indexOf("```bash\n", h);
        int end = text.indexOf("\n```", start + 8);
        String block = text.substring(start + 8, end).replace("\\\n", " ");
        List<Curl> out = new ArrayList<>();
        for (String line : block.split("\n")) {
            String code = line.strip();
            if (code.startsWith("curl ")) {
                out.add(parse(code));
            }
        }
        return out;
    }

    /** A curl line as the README writes them: -s -i -N -o, -X, -H and -d, single-quoted arguments, a trailing comment. */
    static Curl parse(String line) {
        List<String> words = words(line);
        String method = null;
        String path = null;
        String body = null;
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < words.size(); i++) {
            String w = words.get(i);
            switch (w) {
                case "-X" -> method = words.get(++i);
                case "-H" -> {
                    String[] kv = words.get(++i).split(":\\s*", 2);
                    headers.put(kv[0], kv[1]);
                }
                case "-d", "--data" -> body = words.get(++i);
                case "-o" -> i++;
                default -> {
                    Matcher m = URL.matcher(w);
                    if (m.matches()) {
                        path = m.group(1);
                    } else if (!w.startsWith("-")) {
                        throw new IllegalArgumentException("a curl word this reader does not know: " + w + " in " + line);
                    }
                }
            }
        }
        if (path == null) {
            throw new IllegalArgumentException("no localhost:8080 URL in " + line);
        }
        return new Curl(method != null ? method : body != null ? "POST" : "GET", path, headers, body, line);
    }

    private static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean quoted = false;
        boolean any = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '\'') {
                quoted = !quoted;
                any = true;
            } else if (!quoted && c == '#' && w.isEmpty()) {
                break; // a comment
            } else if (!quoted && Character.isWhitespace(c)) {
                if (any) {
                    out.add(w.toString());
                }
                w.setLength(0);
                any = false;
            } else {
                w.append(c);
                any = true;
            }
        }
        if (any) {
            out.add(w.toString());
        }
        return out;
    }

    /** Makes calls through {@code base}, with {@code token} when not null. */
    static final class Caller {
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        private final URI base;
        private final String token;
        final List<Answer> answers = new ArrayList<>();
        String lastJob;

        Caller(URI base, String token) {
            this.base = base;
            this.token = token;
        }

        Answer call(Curl c) throws IOException, InterruptedException {
            String path = lastJob == null ? c.path() : c.path().replace("<id>", lastJob);
            HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60))
                    .method(c.method(), c.body() == null ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofString(c.body()));
            c.headers().forEach(b::header);
            if (token != null) {
                b.header("Authorization", "Bearer " + token);
            }
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            String ct = r.headers().firstValue("Content-Type").orElse("");
            String violations = r.headers().firstValue("sl-violations").orElse("");
            if (violations.isEmpty() && r.body().contains("stoplight.io/prism/errors")) {
                violations = r.body();
            }
            Answer a = new Answer(c.method() + " " + path, r.statusCode(), ct, r.body(), violations);
            answers.add(a);
            if (c.method().equals("POST") && path.equals("/api/v1/jobs") && r.statusCode() == 202) {
                Matcher m = Pattern.compile("\"id\":\"([^\"]+)\"").matcher(r.body());
                if (m.find()) {
                    lastJob = m.group(1);
                }
            }
            return a;
        }

        Answer call(String method, String path, String body) throws IOException, InterruptedException {
            Map<String, String> h = new LinkedHashMap<>();
            if (body != null) {
                h.put("Content-Type", "application/json");
            }
            return call(new Curl(method, path, h, body, method + " " + path));
        }

        /** The first event of an endless stream, read straight from the service (no proxy). */
        static String firstEvent(URI service, Curl c, String token) throws IOException, InterruptedException {
            HttpRequest.Builder b = HttpRequest.newBuilder(service.resolve(c.path())).timeout(Duration.ofSeconds(30));
            if (token != null) {
                b.header("Authorization", "Bearer " + token);
            }
            HttpResponse<InputStream> r = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = r.body()) {
                StringBuilder sb = new StringBuilder();
                int ch;
                while ((ch = in.read()) >= 0 && sb.indexOf("\n\n") < 0) {
                    sb.append((char) ch);
                }
                return r.statusCode() + " " + r.headers().firstValue("Content-Type").orElse("") + "\n"
                        + new String(sb.toString().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
            }
        }
    }
}
