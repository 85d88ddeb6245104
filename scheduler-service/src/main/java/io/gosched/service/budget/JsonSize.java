package io.gosched.service.budget;

import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.Map;

import com.sun.management.HotSpotDiagnosticMXBean;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.BigIntegerNode;
import tools.jackson.databind.node.BinaryNode;
import tools.jackson.databind.node.DecimalNode;
import tools.jackson.databind.node.DoubleNode;
import tools.jackson.databind.node.LongNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.StringNode;

/**
 * Estimates the heap a parsed JSON tree ({@link JsonNode}) retains: the budget's unit of account
 * for every value the service holds on behalf of a client.
 *
 * <h2>How</h2>
 * One walk over the tree adds up the shallow size of each object the tree owns, as HotSpot lays
 * it out: an object is its header plus its fields, rounded up to 8 bytes; an array is its header,
 * its length word and its elements, rounded up likewise. The layout (header 12 bytes and
 * references 4 bytes with compressed oops and class pointers, the JDK 25 default below a 32 GB
 * heap; 16/8 without; 8-byte headers with {@code -XX:+UseCompactObjectHeaders}) is read from the
 * running VM once. Per node, with the default layout:
 * <ul>
 * <li>an object: the node (24), its {@code LinkedHashMap} (64), the hash table (16 + 4 per slot,
 *     a power of two at most 75% full, as the map grows it), an entry per member (40), and each
 *     member's name as a {@code String} (24, plus 16 + its bytes for the array);</li>
 * <li>an array: the node (24), its {@code ArrayList} (24), the element array at the capacity
 *     the list grew to one add at a time (10, 15, 22, 33, ...);</li>
 * <li>a string: the node (16), the {@code String} (24), its bytes (16 + one byte a character
 *     when every character is Latin-1, else two);</li>
 * <li>numbers: an int, short or float node 16, a long or double node 24, big integers and
 *     decimals their node, the {@code BigInteger}/{@code BigDecimal} and its magnitude array;</li>
 * <li>{@code true}, {@code false} and {@code null}: nothing (the nodes are shared singletons).</li>
 * </ul>
 * Member names count in full although the parser's symbol table shares a name among documents,
 * and small ints count although Jackson caches their nodes: the estimate errs on the high side,
 * by design, where sharing saves memory. {@code docs/memory.md} records how close it is to the
 * retained heap measured for the shapes clients send.
 *
 * <p>Cost: linear in the number of nodes, plus a scan of each string's characters. Thread-safe
 * and allocation-light (one work stack for nested containers).
 */
public final class JsonSize {

    /** The object layout of the running VM. */
    public record Layout(int header, int ref) {

        /** HotSpot's layout as the running VM's flags set it; the compressed default when unknown. */
        static Layout ofThisVm() {
            try {
                HotSpotDiagnosticMXBean hs = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
                boolean oops = Boolean.parseBoolean(hs.getVMOption("UseCompressedOops").getValue());
                boolean compact = Boolean.parseBoolean(hs.getVMOption("UseCompactObjectHeaders").getValue());
                boolean klass = Boolean.parseBoolean(hs.getVMOption("UseCompressedClassPointers").getValue());
                return new Layout(compact ? 8 : klass ? 12 : 16, oops ? 4 : 8);
            } catch (RuntimeException notHotSpot) {
                return new Layout(12, 4);
            }
        }

        /** An object with {@code refs} reference fields and {@code bytes} bytes of primitive fields. */
        public long object(int refs, int bytes) {
            return align(header + (long) refs * ref + bytes);
        }

        /** An array of {@code length} elements of {@code elementBytes} each. */
        public long array(long length, int elementBytes) {
            return align(header + 4 + length * elementBytes);
        }

        public long refArray(long length) {
            return array(length, ref);
        }

        /** A {@code String} of {@code chars} characters and its byte array. */
        public long string(int chars, boolean latin1) {
            return object(1, 4 + 1 + 1) + array((long) chars * (latin1 ? 1 : 2), 1);
        }

        static long align(long n) {
            return (n + 7) & ~7L;
        }
    }

    private static final Layout L = Layout.ofThisVm();

    /** A container node: its node factory and its map or list. */
    private static final long CONTAINER_NODE = L.object(2, 0);
    /** {@code LinkedHashMap}: table, entrySet, keySet, values, head, tail; size, modCount, threshold, loadFactor, putMode; accessOrder. */
    private static final long LINKED_HASH_MAP = L.object(6, 5 * 4 + 1);
    /** {@code LinkedHashMap.Entry}: key, value, next, before, after; hash. */
    private static final long MAP_ENTRY = L.object(5, 4);
    /** {@code ArrayList}: elementData; size, modCount. */
    private static final long ARRAY_LIST = L.object(1, 8);
    private static final long REF_NODE = L.object(1, 0);
    private static final long INT_NODE = L.object(0, 4);
    private static final long LONG_NODE = L.object(0, 8);
    /** {@code BigInteger}: mag; signum and four cached ints. */
    private static final long BIG_INTEGER = L.object(1, 5 * 4);
    /** {@code BigDecimal}: intVal, stringCache; scale, precision; intCompact. */
    private static final long BIG_DECIMAL = L.object(2, 8 + 8);

    private JsonSize() {}

    /** The layout the estimates use. */
    public static Layout layout() {
        return L;
    }

    /** Bytes {@code node} retains, every node it reaches included; 0 for null. */
    public static long of(JsonNode node) {
        if (node == null) {
            return 0;
        }
        long total = 0;
        ArrayDeque<JsonNode> work = null;
        JsonNode n = node;
        while (true) {
            switch (n) {
                case ObjectNode o -> {
                    int size = o.size();
                    total += CONTAINER_NODE + LINKED_HASH_MAP + (size == 0 ? 0 : L.refArray(hashTable(size)));
                    for (Map.Entry<String, JsonNode> e : o.properties()) {
                        total += MAP_ENTRY + string(e.getKey());
                        JsonNode child = e.getValue();
                        if (child.isContainer()) {
                            (work == null ? work = new ArrayDeque<>() : work).push(child);
                        } else {
                            total += scalar(child);
                        }
                    }
                }
                case ArrayNode a -> {
                    int size = a.size();
                    total += CONTAINER_NODE + ARRAY_LIST + (size == 0 ? 0 : L.refArray(listCapacity(size)));
                    for (JsonNode child : a) {
                        if (child.isContainer()) {
                            (work == null ? work = new ArrayDeque<>() : work).push(child);
                        } else {
                            total += scalar(child);
                        }
                    }
                }
                default -> total += scalar(n);
            }
            if (work == null || work.isEmpty()) {
                return total;
            }
            n = work.pop();
        }
    }

    /** Bytes a {@code String} retains: the object and its byte array. */
    public static long string(String s) {
        return s == null ? 0 : L.string(s.length(), latin1(s));
    }

    private static long scalar(JsonNode n) {
        return switch (n) {
            case StringNode s -> REF_NODE + string(s.stringValue());
            case LongNode _, DoubleNode _ -> LONG_NODE;
            case BigIntegerNode b -> REF_NODE + bigInteger(b.bigIntegerValue());
            case DecimalNode d -> REF_NODE + bigDecimal(d.decimalValue());
            case BinaryNode b -> REF_NODE + L.array(b.binaryValue().length, 1);
            default -> n.isNumber() ? INT_NODE : n.isPojo() ? REF_NODE + L.object(0, 64) : 0; // true/false/null: singletons
        };
    }

    private static long bigInteger(BigInteger b) {
        return BIG_INTEGER + L.array((b.bitLength() + 31) / 32, 4);
    }

    private static long bigDecimal(BigDecimal d) {
        BigInteger unscaled = d.unscaledValue();
        return BIG_DECIMAL + (unscaled.bitLength() < 64 ? 0 : bigInteger(unscaled));
    }

    /** The table length a {@code HashMap} reaches as {@code size} entries are put one at a time. */
    static int hashTable(int size) {
        int table = 16;
        while (size > table * 3 / 4) {
            table <<= 1;
        }
        return table;
    }

    /** The capacity an {@code ArrayList} made with {@code new ArrayList<>()} reaches after {@code size} adds. */
    static int listCapacity(int size) {
        int cap = 10;
        while (cap < size) {
            cap += cap >> 1;
        }
        return cap;
    }

    private static boolean latin1(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            if (s.charAt(i) > 0xFF) {
                return false;
            }
        }
        return true;
    }
}
