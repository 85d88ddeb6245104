package io.gosched.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one run of a workload reports: the check value (compared with
 * {@link BenchWorkload#expected(long, long)}) and named metrics, lower is better.
 */
public record Result(long check, Map<String, Double> metrics) {

    /** A throughput result: elapsed time divided by the number of operations, in the given unit. */
    public static Result perOp(long check, long elapsedNanos, long ops, String metric) {
        double perOp = (double) elapsedNanos / ops;
        double value = switch (metric) {
            case "ns_op" -> perOp;
            case "us_op" -> perOp / 1e3;
            case "ms" -> perOp / 1e6;
            default -> throw new IllegalArgumentException(metric);
        };
        return new Result(check, Map.of(metric, value));
    }

    /** The wire form: {@code check=C k=v ...}, as the Go peer prints it too. */
    public String toLine() {
        StringBuilder sb = new StringBuilder("check=").append(check);
        metrics.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
        return sb.toString();
    }

    public static Result parse(String line) {
        long check = Long.MIN_VALUE;
        Map<String, Double> metrics = new LinkedHashMap<>();
        for (String kv : line.trim().split("\\s+")) {
            int eq = kv.indexOf('=');
            if (eq < 0) throw new IllegalArgumentException("bad result field " + kv);
            String k = kv.substring(0, eq), v = kv.substring(eq + 1);
            if (k.equals("check")) check = Long.parseLong(v);
            else metrics.put(k, Double.parseDouble(v));
        }
        if (check == Long.MIN_VALUE) throw new IllegalArgumentException("no check in " + line);
        return new Result(check, metrics);
    }
}
