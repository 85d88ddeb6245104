package io.gosched.service.error;

/**
 * One reason a request was refused: where (an RFC 6901 JSON pointer into the request body, or
 * {@code ""} for the whole body) and why.
 */
public record Violation(String pointer, String detail) {

    /** Escapes one reference token as RFC 6901 §4 asks: {@code ~} first, then {@code /}. */
    public static String escape(String token) {
        return token.replace("~", "~0").replace("/", "~1");
    }
}
