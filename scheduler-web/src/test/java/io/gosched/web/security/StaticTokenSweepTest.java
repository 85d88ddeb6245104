package io.gosched.web.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.api.security.AccessRules;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.server.PathContainer;

/**
 * Static-token mode, every operation of the served OpenAPI document: without the token, or with a
 * wrong one, no spelling of its path and no method reaches a controller; with the token, each
 * one does. This is the test that would have caught {@code /%61pi/v1/jobs} and {@code /api;a/v1}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "gosched.api.token=" + StaticTokenSweepTest.TOKEN)
@Import(ControllerCalls.Recorder.class)
class StaticTokenSweepTest {

    static final String TOKEN = "sweep-token-0123456789abcdef";

    @LocalServerPort
    int port;

    @Autowired
    ControllerCalls calls;

    @Autowired
    AccessRules rules;

    @Test
    void withoutTheTokenNoOperationIsReachedWhateverThePathSpelling() throws Exception {
        EndpointSweep sweep = new EndpointSweep(port, calls);
        List<EndpointSweep.Operation> ops = sweep.operations();
        assertThat(ops).as("operations in /v3/api-docs").hasSizeGreaterThanOrEqualTo(20);
        List<String> failures = new ArrayList<>();
        for (EndpointSweep.Operation op : ops) {
            failures.addAll(sweep.refusals(op, new EndpointSweep.Credential("without credentials", null),
                    401, "urn:gosched:problem:unauthorized", true));
            failures.addAll(sweep.refusals(op, new EndpointSweep.Credential("with a wrong token", "Bearer wrong-token-0123456789abcdef"),
                    401, "urn:gosched:problem:invalid-token", true));
            failures.addAll(sweep.refusals(op, new EndpointSweep.Credential("with the token but not as Bearer", TOKEN),
                    401, "urn:gosched:problem:unauthorized", true, false));
        }
        assertThat(failures).as("requests that were not refused").isEmpty();
    }

    @Test
    void theTokenReachesEveryOperation() throws Exception {
        EndpointSweep sweep = new EndpointSweep(port, calls);
        List<String> failures = new ArrayList<>();
        for (EndpointSweep.Operation op : sweep.operations()) {
            failures.addAll(sweep.reaches(op, new EndpointSweep.Credential("the token", "Bearer " + TOKEN)));
        }
        assertThat(failures).isEmpty();
    }

    /** A new endpoint must get a rule of its own (or fall under a prefix's), not the catch-all. */
    @Test
    void everyDocumentedOperationIsUnderADeliberateRule() throws Exception {
        List<String> unclassified = new ArrayList<>();
        for (EndpointSweep.Operation op : new EndpointSweep(port, calls).operations()) {
            AccessRules.Rule rule = rules.ruleFor(PathContainer.parsePath(op.path())).orElseThrow();
            if (rule.unclassified()) {
                unclassified.add(op.toString());
            }
        }
        assertThat(unclassified).as("operations only the /api/** catch-all covers: add them to AccessRules").isEmpty();
    }
}
