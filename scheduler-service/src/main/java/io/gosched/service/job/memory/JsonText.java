package io.gosched.service.job.memory;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.BigIntegerNode;
import tools.jackson.databind.node.BooleanNode;
import tools.jackson.databind.node.DecimalNode;
import tools.jackson.databind.node.DoubleNode;
import tools.jackson.databind.node.IntNode;
import tools.jackson.databind.node.LongNode;
import tools.jackson.databind.node.NullNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.ShortNode;
import tools.jackson.databind.node.StringNode;

/**
 * A request tree written as compact UTF-8 JSON text, as the in-memory store keeps it: the same
 * text Jackson writes for it, read back into an equal tree, for a fraction of the cost. For a
 * one-step job Jackson's {@code writeValueAsBytes} (a serialization context and a generator per
 * call) was a fifth of a submission's samples; this is one pass into a byte array.
 *
 * <p>Only what a request parsed from JSON holds is written here (objects, arrays, strings, the
 * integer and decimal kinds, finite doubles, booleans, null), to a depth of {@value #MAX_DEPTH};
 * anything else (a POJO or binary node, a non-finite double, a lone surrogate in a string, a
 * deeper tree) goes to Jackson whole, so the text is Jackson's in every case.
 */
final class JsonText {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int MAX_DEPTH = 64;
    private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};

    /** Thrown inside a write that met something this writer leaves to Jackson. */
    private static final class Unsupported extends RuntimeException {
        Unsupported() {
            super(null, null, false, false);
        }
    }

    private static final Unsupported UNSUPPORTED = new Unsupported();

    private byte[] buf = new byte[128];
    private int len;

    private JsonText() {}

    /** The compact JSON text of {@code node}, UTF-8. */
    static byte[] write(JsonNode node) {
        JsonText w = new JsonText();
        try {
            w.value(node, 0);
        } catch (Unsupported jacksonWritesIt) {
            return JSON.writeValueAsBytes(node);
        }
        return Arrays.copyOf(w.buf, w.len);
    }

    private void value(JsonNode n, int depth) {
        switch (n) {
            case ObjectNode o -> {
                if (depth >= MAX_DEPTH) {
                    throw UNSUPPORTED;
                }
                put('{');
                boolean first = true;
                for (Map.Entry<String, JsonNode> e : o.properties()) {
                    if (!first) {
                        put(',');
                    }
                    first = false;
                    string(e.getKey());
                    put(':');
                    value(e.getValue(), depth + 1);
                }
                put('}');
            }
            case ArrayNode a -> {
                if (depth >= MAX_DEPTH) {
                    throw UNSUPPORTED;
                }
                put('[');
                for (int i = 0; i < a.size(); i++) {
                    if (i > 0) {
                        put(',');
                    }
                    value(a.get(i), depth + 1);
                }
                put(']');
            }
            case StringNode s -> string(s.stringValue());
            case IntNode i -> ascii(Integer.toString(i.intValue()));
            case LongNode l -> ascii(Long.toString(l.longValue()));
            case ShortNode s -> ascii(Short.toString(s.shortValue()));
            case BigIntegerNode b -> ascii(b.bigIntegerValue().toString());
            case DecimalNode d -> ascii(d.decimalValue().toString());
            case DoubleNode d when Double.isFinite(d.doubleValue()) -> ascii(Double.toString(d.doubleValue()));
            case BooleanNode b -> bytes(b.booleanValue() ? TRUE : FALSE);
            case NullNode x -> bytes(NULL);
            default -> throw UNSUPPORTED;
        }
    }

    /** A JSON string: quotes, the short escapes, a backslash-u escape for other control characters, UTF-8 for the rest. */
    private void string(String s) {
        room(s.length() + 2);
        put('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x80) {
                if (c == '"' || c == '\\') {
                    put('\\');
                }
                put(c);
            } else if (c < 0x20) {
                escape(c);
            } else if (c < 0x800) {
                put(0xc0 | c >> 6);
                put(0x80 | c & 0x3f);
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                put(0xf0 | cp >> 18);
                put(0x80 | cp >> 12 & 0x3f);
                put(0x80 | cp >> 6 & 0x3f);
                put(0x80 | cp & 0x3f);
            } else if (Character.isSurrogate(c)) {
                throw UNSUPPORTED; // a lone surrogate: Jackson decides what it becomes
            } else {
                put(0xe0 | c >> 12);
                put(0x80 | c >> 6 & 0x3f);
                put(0x80 | c & 0x3f);
            }
        }
        put('"');
    }

    private void escape(char c) {
        put('\\');
        switch (c) {
            case '\n' -> put('n');
            case '\r' -> put('r');
            case '\t' -> put('t');
            case '\b' -> put('b');
            case '\f' -> put('f');
            default -> {
                put('u');
                put('0');
                put('0');
                put(HEX[c >> 4]);
                put(HEX[c & 0xf]);
            }
        }
    }

    private void ascii(String s) {
        room(s.length());
        for (int i = 0; i < s.length(); i++) {
            buf[len++] = (byte) s.charAt(i);
        }
    }

    private void bytes(byte[] b) {
        room(b.length);
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    private void put(int b) {
        if (len == buf.length) {
            room(1);
        }
        buf[len++] = (byte) b;
    }

    private void room(int n) {
        if (len + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
        }
    }
}
