package io.gosched.handler;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import io.gosched.service.channel.ChannelName;
import io.gosched.service.error.Violation;
import io.gosched.service.workload.JsonInput;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Path;
import jakarta.validation.Validator;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.NullNode;

/**
 * One {@link JobHandler} method of one bean, checked once at start-up: how its arguments are bound
 * and validated, and how it is called. Immutable and thread-safe.
 */
final class HandlerMethod {

    final String name;
    final boolean blocking;
    final String description;
    /** The arguments parameter's type, or null when the method takes none. */
    final Type argsType;
    final String source;
    private final Object bean;
    private final Method method;
    /** Position of the arguments parameter, or -1. */
    private final int argsIndex;
    /** Position of the JobContext parameter, or -1. */
    private final int contextIndex;
    private final ObjectReader reader;
    private final Validator validator;

    private HandlerMethod(JobHandler annotation, Object bean, Method method, int argsIndex, int contextIndex, JsonMapper json,
            Validator validator) {
        this.name = annotation.value();
        this.blocking = annotation.blocking();
        this.description = annotation.description().isBlank() ? null : annotation.description();
        this.bean = bean;
        this.method = method;
        this.argsIndex = argsIndex;
        this.contextIndex = contextIndex;
        this.argsType = argsIndex < 0 ? null : method.getGenericParameterTypes()[argsIndex];
        this.source = describe(method);
        JavaType type = argsType == null ? null : json.getTypeFactory().constructType(argsType);
        this.reader = type == null ? null : json.readerFor(type);
        this.validator = validator;
    }

    /**
     * The handler of {@code method} (as declared on the bean's class; {@code invocable} is the one to
     * call on {@code bean}, a proxy's if the bean is one).
     *
     * @throws IllegalStateException naming the method when its signature or name is not one a handler may have
     */
    static HandlerMethod of(String beanName, Object bean, Method declared, Method invocable, JsonMapper json, Validator validator) {
        JobHandler annotation = declared.getAnnotation(JobHandler.class);
        String where = "@JobHandler method " + describe(declared) + " of bean '" + beanName + "'";
        if (!ChannelName.PATTERN.matcher(annotation.value()).matches()) {
            throw new IllegalStateException(where + ": name '" + annotation.value() + "' must match " + ChannelName.REGEXP);
        }
        int argsIndex = -1;
        int contextIndex = -1;
        Parameter[] params = declared.getParameters();
        for (int i = 0; i < params.length; i++) {
            if (params[i].getType() == JobContext.class) {
                if (contextIndex >= 0) {
                    throw new IllegalStateException(where + " takes two JobContext parameters; it may take one");
                }
                contextIndex = i;
            } else {
                if (argsIndex >= 0) {
                    throw new IllegalStateException(where + " takes two arguments parameters (" + params[argsIndex].getType().getSimpleName()
                            + " and " + params[i].getType().getSimpleName() + "); a handler takes at most one, bound from the job's "
                            + "'args', and at most one JobContext");
                }
                argsIndex = i;
            }
        }
        if (Modifier.isStatic(declared.getModifiers())) {
            throw new IllegalStateException(where + " is static; a handler is an instance method of a bean");
        }
        invocable.setAccessible(true);
        return new HandlerMethod(annotation, bean, invocable, argsIndex, contextIndex, json, validator);
    }

    private static String describe(Method m) {
        return m.getDeclaringClass().getName() + "." + m.getName()
                + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", ", "(", ")"));
    }

    /**
     * The job's {@code args} bound to the arguments parameter and validated; {@link #NO_ARGS} for a
     * handler without one; null with each problem recorded under {@code pointer}. Called at
     * submission.
     */
    Object bind(JsonNode args, String pointer, JsonInput in) {
        if (reader == null) {
            if (args != null && !(args.isObject() && args.isEmpty())) {
                in.violation(pointer, "handler '" + name + "' takes no arguments");
                return null;
            }
            return NO_ARGS;
        }
        Object value;
        try {
            value = reader.readValue(args == null ? NullNode.getInstance() : args);
        } catch (DatabindException e) {
            in.violation(pointer + pointerOf(e), bindingDetail(e));
            return null;
        } catch (JacksonException e) {
            in.violation(pointer, "cannot be read as " + typeName() + ": " + e.getOriginalMessage());
            return null;
        }
        if (value == null) {
            in.violation(pointer, "is required: handler '" + name + "' takes " + typeName());
            return null;
        }
        Set<ConstraintViolation<Object>> violations = validator.validate(value);
        if (!violations.isEmpty()) {
            violations.stream()
                    .map(v -> new Violation(pointer + pointerOf(v.getPropertyPath()), v.getMessage()))
                    .sorted((a, b) -> a.pointer().compareTo(b.pointer()))
                    .forEach(v -> in.violation(v.pointer(), v.detail()));
            return null;
        }
        return value;
    }

    /** The bound value of a handler that takes no arguments parameter. */
    static final Object NO_ARGS = new Object();

    private String typeName() {
        return argsType instanceof Class<?> c ? c.getSimpleName() : argsType.getTypeName();
    }

    /** The JSON pointer (relative to args) of the field Jackson could not read, from its reference chain. */
    private static String pointerOf(DatabindException e) {
        StringBuilder sb = new StringBuilder();
        for (JacksonException.Reference r : e.getPath()) {
            if (r.getPropertyName() != null) {
                sb.append('/').append(Violation.escape(r.getPropertyName()));
            } else if (r.getIndex() >= 0) {
                sb.append('/').append(r.getIndex());
            }
        }
        return sb.toString();
    }

    private String bindingDetail(DatabindException e) {
        if (e instanceof tools.jackson.databind.exc.UnrecognizedPropertyException) {
            return "unknown field";
        }
        if (e instanceof tools.jackson.databind.exc.MismatchedInputException m && m.getTargetType() != null) {
            String target = m.getTargetType().getSimpleName();
            return "must be " + (m.getTargetType().isEnum()
                    ? "one of " + Arrays.toString(m.getTargetType().getEnumConstants())
                    : "a value of type " + target) + " (" + firstLine(e.getOriginalMessage()) + ")";
        }
        return firstLine(e.getOriginalMessage());
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "cannot be read";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** The JSON pointer (relative to args) of a Bean Validation property path: field names, indices, map keys. */
    private static String pointerOf(Path path) {
        StringBuilder sb = new StringBuilder();
        for (Path.Node n : path) {
            // A container element's index or key belongs to the node after the container's own name.
            if (n.getIndex() != null) {
                sb.append('/').append(n.getIndex());
            } else if (n.getKey() != null) {
                sb.append('/').append(Violation.escape(String.valueOf(n.getKey())));
            }
            if (n.getName() != null && !n.getName().startsWith("<")) {
                sb.append('/').append(Violation.escape(n.getName()));
            }
        }
        return sb.toString();
    }

    /**
     * Calls the method with the bound arguments. Executed only by the attempt's goroutine.
     *
     * @throws Throwable what the method threw (unwrapped)
     */
    Object invoke(Object args, JobContext context) throws Throwable {
        Object[] values = new Object[method.getParameterCount()];
        if (argsIndex >= 0) {
            values[argsIndex] = args;
        }
        if (contextIndex >= 0) {
            values[contextIndex] = context;
        }
        try {
            return method.invoke(bean, values);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
