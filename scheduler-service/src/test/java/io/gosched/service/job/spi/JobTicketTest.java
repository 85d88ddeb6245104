package io.gosched.service.job.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The hand-written id check answers as the documented pattern does, for every kind of string. */
class JobTicketTest {

    @Test
    void isTokenAgreesWithTheIdPattern() {
        List<String> cases = new ArrayList<>(List.of("", "a", "A", "z", "Z", "0", "9", "_", "-", "x".repeat(64), "x".repeat(65),
                UUID.randomUUID().toString(), "a.b", "a b", "a/b", "a*", "a>", "é", "a\n", "\u0000", "`", "@", "[", "{", ":", "/"));
        Random rnd = new Random(12);
        String alphabet = "aZ09_-.@[`{/: é\t";
        for (int i = 0; i < 10_000; i++) {
            StringBuilder b = new StringBuilder();
            int n = rnd.nextInt(70);
            for (int k = 0; k < n; k++) {
                b.append(rnd.nextInt(4) == 0 ? alphabet.charAt(rnd.nextInt(alphabet.length())) : (char) rnd.nextInt(128));
            }
            cases.add(b.toString());
        }
        for (String s : cases) {
            assertThat(JobTicket.isToken(s)).as("'%s'", s).isEqualTo(JobTicket.JOB_ID.matcher(s).matches());
        }
    }

    @Test
    void aTicketRefusesABadJobIdOrNode() {
        assertThatThrownBy(() -> new JobTicket("a.b", 1, 0, null, null)).hasMessageContaining("job id");
        assertThatThrownBy(() -> new JobTicket("ok", 1, 0, null, "no de")).hasMessageContaining("node id");
        assertThat(new JobTicket(UUID.randomUUID().toString(), 1, 9, null, "node-1").priority()).isEqualTo(9);
    }
}
