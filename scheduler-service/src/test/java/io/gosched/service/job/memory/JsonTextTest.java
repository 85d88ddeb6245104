package io.gosched.service.job.memory;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store keeps a request as the text {@link JsonText} writes and reads it back for a retry or
 * a claim: the text must be Jackson's, byte for byte, and read back into an equal tree.
 */
class JsonTextTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final JsonNodeFactory F = JSON.getNodeFactory();

    static void sameAsJackson(JsonNode tree) {
        byte[] mine = JsonText.write(tree);
        byte[] jackson = JSON.writeValueAsBytes(tree);
        assertThat(new String(mine, StandardCharsets.UTF_8)).as("text of %s", tree).isEqualTo(new String(jackson, StandardCharsets.UTF_8));
        assertThat(mine).isEqualTo(jackson);
        assertThat(JSON.readTree(mine)).isEqualTo(JSON.readTree(jackson));
    }

    @Test
    void requestsAsClientsSendThemAreWrittenAsJacksonWritesThem() {
        for (String s : List.of(
                "{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}",
                "{\"name\":\"etl\",\"priority\":4,\"notBefore\":\"2026-12-01T10:00:00Z\",\"retry\":{\"maxAttempts\":3,\"multiplier\":1.5},"
                        + "\"workload\":{\"channels\":[{\"name\":\"c\",\"capacity\":4}],\"steps\":[{\"op\":\"send\",\"channel\":\"c\","
                        + "\"value\":{\"n\":-12,\"big\":123456789012345678901234567890,\"x\":1.0E-300,\"t\":true,\"f\":false,\"z\":null,"
                        + "\"a\":[],\"o\":{}}}]}}",
                "{\"template\":\"fan-out\",\"params\":{\"s\":\"quote \\\" backslash \\\\ slash / tab \\t nl \\n cr \\r bs \\b ff \\f"
                        + " nul \\u0000 us \\u001f del \\u007f\"}}",
                "{\"s\":\"é ü ß ж 中文 € \\ud83d\\ude00 end\",\"long\":9223372036854775807,\"neg\":-9223372036854775808,"
                        + "\"d\":[0.1,-0.0,1e10,2.5E-7,123.456,1.7976931348623157E308]}",
                "[1,[2,[3,[4,{\"k\":[5]}]]]]", "\"just a string\"", "42", "null", "true")) {
            sameAsJackson(JSON.readTree(s));
        }
    }

    @Test
    void everyNumberKindAndEscapeIsWrittenAsJacksonWritesIt() {
        ObjectNode o = F.objectNode();
        o.put("short", (short) -7);
        o.put("int", Integer.MIN_VALUE);
        o.put("long", Long.MAX_VALUE);
        o.put("bigint", new BigInteger("-98765432109876543210"));
        o.put("decimal", new BigDecimal("1.50"));
        o.put("decimalExp", new BigDecimal("1E+3"));
        o.put("double", 1.0 / 3);
        o.put("tiny", Double.MIN_VALUE);
        StringBuilder controls = new StringBuilder();
        for (char c = 0; c < 0x20; c++) {
            controls.append(c);
        }
        o.put("controls", controls.toString());
        o.put("key with \"quotes\" and \u0001", "v");
        sameAsJackson(o);
    }

    @Test
    void randomTreesAreWrittenAsJacksonWritesThem() {
        Random r = new Random(12);
        for (int i = 0; i < 2_000; i++) {
            sameAsJackson(random(r, 0));
        }
    }

    @Test
    void whatItLeavesToJacksonStillComesOutAsJacksonWritesIt() {
        ObjectNode o = F.objectNode();
        o.put("nan", Double.NaN);
        o.put("float", 1.1f);
        o.put("lone", "a\ud800b");
        o.set("pojo", F.pojoNode(List.of(1, 2)));
        o.put("bin", new byte[] {1, 2, 3});
        for (String k : List.of("nan", "float", "lone", "pojo", "bin")) {
            ObjectNode one = F.objectNode();
            one.set(k, o.get(k));
            assertThat(JsonText.write(one)).as(k).isEqualTo(JSON.writeValueAsBytes(one));
        }
        JsonNode deep = F.numberNode(1);
        for (int i = 0; i < 200; i++) {
            deep = F.arrayNode().add(deep);
        }
        sameAsJackson(deep);
    }

    static JsonNode random(Random r, int depth) {
        int kind = depth > 5 ? 2 + r.nextInt(8) : r.nextInt(10);
        switch (kind) {
            case 0 -> {
                ObjectNode o = F.objectNode();
                for (int i = r.nextInt(5); i > 0; i--) {
                    o.set(randomString(r), random(r, depth + 1));
                }
                return o;
            }
            case 1 -> {
                ArrayNode a = F.arrayNode();
                for (int i = r.nextInt(5); i > 0; i--) {
                    a.add(random(r, depth + 1));
                }
                return a;
            }
            case 2, 3 -> {
                return F.stringNode(randomString(r));
            }
            case 4 -> {
                return F.numberNode(r.nextInt());
            }
            case 5 -> {
                return F.numberNode(r.nextLong());
            }
            case 6 -> {
                double d = switch (r.nextInt(3)) {
                    case 0 -> r.nextDouble();
                    case 1 -> Double.longBitsToDouble(r.nextLong() & 0x7fefffffffffffffL) * (r.nextBoolean() ? 1 : -1);
                    default -> r.nextInt(1000) / 8.0;
                };
                return F.numberNode(d);
            }
            case 7 -> {
                return F.numberNode(new BigInteger(100, r));
            }
            case 8 -> {
                return F.booleanNode(r.nextBoolean());
            }
            default -> {
                return F.nullNode();
            }
        }
    }

    static String randomString(Random r) {
        StringBuilder b = new StringBuilder();
        for (int i = r.nextInt(12); i > 0; i--) {
            switch (r.nextInt(6)) {
                case 0 -> b.append((char) r.nextInt(0x20)); // control
                case 1 -> b.append("\"\\/".charAt(r.nextInt(3)));
                case 2 -> b.append((char) (0x80 + r.nextInt(0x780))); // two bytes
                case 3 -> b.append((char) (0x800 + r.nextInt(0xd000 - 0x800))); // three bytes
                case 4 -> b.appendCodePoint(0x10000 + r.nextInt(0x100000)); // a surrogate pair
                default -> b.append((char) (0x20 + r.nextInt(0x60)));
            }
        }
        return b.toString();
    }
}
