package io.gosched.web;

import java.net.URI;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

/**
 * The 400 answer to a bad query parameter of the web endpoints: an RFC 9457 problem detail that
 * names the parameter and says what it accepts, the same shape for every endpoint.
 */
public final class BadParameterProblem {

    private BadParameterProblem() {
    }

    /**
     * A {@code 400 application/problem+json} with {@code type}, {@code title}, {@code detail},
     * {@code "parameter": parameter} and the {@code accepted} properties (bounds or allowed values).
     */
    public static ResponseEntity<ProblemDetail> of(URI type, String title, String detail, String parameter,
            Map<String, Object> accepted) {
        ProblemDetail pd = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, detail);
        pd.setType(type);
        pd.setTitle(title);
        pd.setProperty("parameter", parameter);
        accepted.forEach(pd::setProperty);
        return ResponseEntity.badRequest().contentType(MediaType.APPLICATION_PROBLEM_JSON).body(pd);
    }
}
