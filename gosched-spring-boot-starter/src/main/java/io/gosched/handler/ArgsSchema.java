package io.gosched.handler;

import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import jakarta.validation.constraints.Email;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Negative;
import jakarta.validation.constraints.NegativeOrZero;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.validation.constraints.Size;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The JSON Schema (draft 2020-12) of a handler's arguments, read off the parameter's Java type:
 * records (their components), other classes (their instance fields), scalars, enums, arrays,
 * collections, {@code Map<String, ?>}, {@code Optional}, nested and recursive types (a type that
 * contains itself goes to {@code $defs} and is referred to by {@code $ref}). {@code required}
 * comes from {@code @NotNull}, {@code @NotBlank}, {@code @NotEmpty} and primitive types; bounds
 * from {@code @Min}, {@code @Max}, {@code @Positive...}, {@code @Size}, {@code @Pattern}. Names
 * follow {@code @JsonProperty}; {@code @JsonIgnore}d members are left out. It describes what the
 * binder accepts for the common shapes; a custom deserializer's format is not seen (an empty
 * schema, any JSON, stands for a type it cannot read).
 *
 * <p>Not thread-safe: one instance per schema.
 */
final class ArgsSchema {

    static final String DIALECT = "https://json-schema.org/draft/2020-12/schema";
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private final Deque<Class<?>> inProgress = new ArrayDeque<>();
    private final Set<Class<?>> recursive = new HashSet<>();
    private final Map<String, JsonNode> defs = new TreeMap<>();

    private ArgsSchema() {
    }

    /** The schema of a handler's {@code args}: null type for a handler without an arguments parameter. */
    static ObjectNode of(Type type) {
        ArgsSchema s = new ArgsSchema();
        ObjectNode root = F.objectNode();
        root.put("$schema", DIALECT);
        if (type == null) {
            root.put("type", "object");
            root.put("maxProperties", 0);
            root.put("description", "this handler takes no arguments");
            return root;
        }
        root.setAll(s.schema(type));
        if (!s.defs.isEmpty()) {
            ObjectNode d = root.putObject("$defs");
            s.defs.forEach(d::set);
        }
        return root;
    }

    private ObjectNode schema(Type type) {
        ObjectNode n = F.objectNode();
        Class<?> raw = raw(type);
        if (raw == null || raw == Object.class || JsonNode.class.isAssignableFrom(raw)) {
            return n; // any JSON
        }
        if (raw == String.class || raw == char.class || raw == Character.class || CharSequence.class.isAssignableFrom(raw)) {
            return n.put("type", "string");
        }
        if (raw == UUID.class) {
            return n.put("type", "string").put("format", "uuid");
        }
        if (raw == Instant.class || raw == OffsetDateTime.class || raw == ZonedDateTime.class || raw == LocalDateTime.class) {
            return n.put("type", "string").put("format", raw == LocalDateTime.class ? "date-time-local" : "date-time");
        }
        if (raw == LocalDate.class) {
            return n.put("type", "string").put("format", "date");
        }
        if (raw == LocalTime.class) {
            return n.put("type", "string").put("format", "time");
        }
        if (raw == Duration.class) {
            return n.put("type", "string").put("format", "duration");
        }
        if (raw == boolean.class || raw == Boolean.class) {
            return n.put("type", "boolean");
        }
        if (raw == int.class || raw == Integer.class || raw == long.class || raw == Long.class || raw == short.class
                || raw == Short.class || raw == byte.class || raw == Byte.class || raw == BigInteger.class) {
            n.put("type", "integer");
            if (raw == int.class || raw == Integer.class) {
                n.put("minimum", Integer.MIN_VALUE).put("maximum", Integer.MAX_VALUE);
            } else if (raw == short.class || raw == Short.class) {
                n.put("minimum", Short.MIN_VALUE).put("maximum", Short.MAX_VALUE);
            } else if (raw == byte.class || raw == Byte.class) {
                n.put("minimum", Byte.MIN_VALUE).put("maximum", Byte.MAX_VALUE);
            }
            return n;
        }
        if (raw == double.class || raw == Double.class || raw == float.class || raw == Float.class || raw == BigDecimal.class
                || Number.class.isAssignableFrom(raw)) {
            return n.put("type", "number");
        }
        if (raw.isEnum()) {
            n.put("type", "string");
            ArrayNode values = n.putArray("enum");
            for (Object c : raw.getEnumConstants()) {
                values.add(((Enum<?>) c).name());
            }
            return n;
        }
        if (raw == Optional.class) {
            return schema(typeArgument(type, 0));
        }
        if (raw.isArray() || Collection.class.isAssignableFrom(raw)) {
            n.put("type", "array");
            Type item = raw.isArray() ? (type instanceof GenericArrayType g ? g.getGenericComponentType() : raw.getComponentType())
                    : typeArgument(type, 0);
            n.set("items", schema(item));
            if (Set.class.isAssignableFrom(raw)) {
                n.put("uniqueItems", true);
            }
            return n;
        }
        if (Map.class.isAssignableFrom(raw)) {
            n.put("type", "object");
            n.set("additionalProperties", schema(typeArgument(type, 1)));
            return n;
        }
        return object(raw);
    }

    /** A record or another class: its properties, or a reference to its definition when it contains itself. */
    private ObjectNode object(Class<?> raw) {
        if (inProgress.contains(raw)) {
            recursive.add(raw);
            return F.objectNode().put("$ref", "#/$defs/" + raw.getSimpleName());
        }
        inProgress.push(raw);
        ObjectNode n = F.objectNode();
        n.put("type", "object");
        ObjectNode props = n.putObject("properties");
        ArrayNode required = F.arrayNode();
        if (raw.isRecord()) {
            for (RecordComponent c : raw.getRecordComponents()) {
                Field f = field(raw, c.getName());
                property(props, required, c.getName(), c.getGenericType(), f != null ? f : c.getAccessor(), c.getAccessor());
            }
        } else {
            for (Class<?> k = raw; k != null && k != Object.class; k = k.getSuperclass()) {
                for (Field f : k.getDeclaredFields()) {
                    if (!Modifier.isStatic(f.getModifiers()) && !Modifier.isTransient(f.getModifiers()) && !f.isSynthetic()) {
                        property(props, required, f.getName(), f.getGenericType(), f, null);
                    }
                }
            }
        }
        if (!required.isEmpty()) {
            n.set("required", required);
        }
        inProgress.pop();
        if (recursive.contains(raw)) {
            defs.put(raw.getSimpleName(), n);
            return F.objectNode().put("$ref", "#/$defs/" + raw.getSimpleName());
        }
        return n;
    }

    private void property(ObjectNode props, ArrayNode required, String javaName, Type type, AnnotatedElement where, AnnotatedElement also) {
        if (has(where, also, JsonIgnore.class)) {
            return;
        }
        JsonProperty jp = get(where, also, JsonProperty.class);
        String name = jp != null && !jp.value().isEmpty() ? jp.value() : javaName;
        ObjectNode s = schema(type);
        Class<?> raw = raw(type);
        boolean text = raw != null && CharSequence.class.isAssignableFrom(raw);
        boolean many = raw != null && (raw.isArray() || Collection.class.isAssignableFrom(raw));
        boolean map = raw != null && Map.class.isAssignableFrom(raw);
        if ((raw != null && raw.isPrimitive()) || has(where, also, NotNull.class) || has(where, also, NotBlank.class)
                || has(where, also, NotEmpty.class) || (jp != null && jp.required())) {
            required.add(name);
        }
        if (has(where, also, NotBlank.class)) {
            s.put("pattern", "\\S");
        }
        if (has(where, also, NotEmpty.class)) {
            s.put(text ? "minLength" : many ? "minItems" : "minProperties", 1);
        }
        Min min = get(where, also, Min.class);
        if (min != null) {
            s.put("minimum", min.value());
        }
        Max max = get(where, also, Max.class);
        if (max != null) {
            s.put("maximum", max.value());
        }
        if (has(where, also, Positive.class)) {
            s.put("exclusiveMinimum", 0);
        }
        if (has(where, also, PositiveOrZero.class)) {
            s.put("minimum", 0);
        }
        if (has(where, also, Negative.class)) {
            s.put("exclusiveMaximum", 0);
        }
        if (has(where, also, NegativeOrZero.class)) {
            s.put("maximum", 0);
        }
        Size size = get(where, also, Size.class);
        if (size != null) {
            String lo = text ? "minLength" : many ? "minItems" : map ? "minProperties" : null;
            String hi = text ? "maxLength" : many ? "maxItems" : map ? "maxProperties" : null;
            if (lo != null && size.min() > 0) {
                s.put(lo, size.min());
            }
            if (hi != null && size.max() < Integer.MAX_VALUE) {
                s.put(hi, size.max());
            }
        }
        Pattern pattern = get(where, also, Pattern.class);
        if (pattern != null) {
            s.put("pattern", pattern.regexp());
        }
        if (has(where, also, Email.class)) {
            s.put("format", "email");
        }
        props.set(name, s);
    }

    private static boolean has(AnnotatedElement a, AnnotatedElement b, Class<? extends Annotation> type) {
        return get(a, b, type) != null;
    }

    private static <A extends Annotation> A get(AnnotatedElement a, AnnotatedElement b, Class<A> type) {
        A found = a == null ? null : a.getAnnotation(type);
        return found != null || b == null ? found : b.getAnnotation(type);
    }

    private static Field field(Class<?> type, String name) {
        try {
            return type.getDeclaredField(name);
        } catch (NoSuchFieldException e) {
            return null;
        }
    }

    private static Class<?> raw(Type type) {
        return switch (type) {
            case Class<?> c -> c;
            case ParameterizedType p -> raw(p.getRawType());
            case GenericArrayType g -> {
                Class<?> component = raw(g.getGenericComponentType());
                yield component == null ? Object[].class : component.arrayType();
            }
            case WildcardType w -> raw(w.getUpperBounds()[0]);
            case TypeVariable<?> v -> raw(v.getBounds()[0]);
            case null, default -> null;
        };
    }

    private static Type typeArgument(Type type, int i) {
        if (type instanceof ParameterizedType p && p.getActualTypeArguments().length > i) {
            return p.getActualTypeArguments()[i];
        }
        return Object.class;
    }
}
