package io.gosched.api.error;

import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import org.springframework.core.convert.converter.Converter;
import org.springframework.core.convert.converter.ConverterFactory;
import org.springframework.format.FormatterRegistry;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/**
 * Request parameters typed as enums: the wire name of a constant is its name in lower case
 * ({@code timed_out} for {@code TIMED_OUT}), the spelling the API writes in its JSON. A value
 * that names no constant fails conversion, and the problem handler answers 422 listing
 * {@link #names the accepted names}.
 */
public final class WireEnums implements ConverterFactory<String, Enum<?>> {

    /**
     * Registers the conversion with WebFlux: the auto-configuration's bean, and what a web slice
     * test imports to read parameters as the application does.
     */
    public static final class Formatters implements WebFluxConfigurer {
        @Override
        public void addFormatters(FormatterRegistry registry) {
            registry.addConverterFactory(new WireEnums());
        }
    }

    /** The wire names of {@code type}'s constants, in declaration order. */
    public static List<String> names(Class<?> type) {
        return Stream.of(type.getEnumConstants()).map(c -> wireName((Enum<?>) c)).toList();
    }

    public static String wireName(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT);
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <T extends Enum<?>> Converter<String, T> getConverter(Class<T> targetType) {
        Class<?> type = targetType;
        while (type != null && !type.isEnum()) {
            type = type.getSuperclass(); // a constant with a body is a subclass of its enum
        }
        Class<? extends Enum> enumType = (Class<? extends Enum>) type;
        return source -> {
            String s = source.strip();
            if (s.isEmpty()) {
                return null;
            }
            for (Object c : enumType.getEnumConstants()) {
                if (wireName((Enum<?>) c).equals(s.toLowerCase(Locale.ROOT))) {
                    return (T) c;
                }
            }
            throw new IllegalArgumentException("must be one of " + String.join(", ", names(enumType)));
        };
    }
}
