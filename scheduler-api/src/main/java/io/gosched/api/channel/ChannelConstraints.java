package io.gosched.api.channel;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.gosched.service.ServiceProperties;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

/**
 * The constraints of channel requests whose bounds are configured, not written in the code:
 * checked by the framework with the request's other constraints, and worded as a range with the
 * value sent ({@code must be between 0 and 30000, was 40000}). Their validators are made by the
 * application's validator factory, which hands them the service's properties.
 */
final class ChannelConstraints {

    private ChannelConstraints() {
    }

    /** How long a send or receive may wait: 0 to {@code gosched.api.channels.max-timeout-ms}; absent means the default. */
    @Documented
    @Constraint(validatedBy = TimeoutValidator.class)
    @Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT})
    @Retention(RetentionPolicy.RUNTIME)
    @interface Timeout {
        String message() default "must be between 0 and the configured maximum";

        Class<?>[] groups() default {};

        Class<? extends Payload>[] payload() default {};
    }

    /** A channel's buffer: at most {@code gosched.api.limits.max-channel-capacity} (its lower bound is {@code @Min(0)}'s). */
    @Documented
    @Constraint(validatedBy = CapacityValidator.class)
    @Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT})
    @Retention(RetentionPolicy.RUNTIME)
    @interface Capacity {
        String message() default "must be at most the configured maximum";

        Class<?>[] groups() default {};

        Class<? extends Payload>[] payload() default {};
    }

    static final class TimeoutValidator implements ConstraintValidator<Timeout, Long> {
        private final long max;

        TimeoutValidator(ServiceProperties properties) {
            this.max = properties.channels().maxTimeoutMs();
        }

        @Override
        public boolean isValid(Long ms, ConstraintValidatorContext context) {
            return ms == null || ms >= 0 && ms <= max || between(context, 0, max, ms);
        }
    }

    static final class CapacityValidator implements ConstraintValidator<Capacity, Integer> {
        private final int max;

        CapacityValidator(ServiceProperties properties) {
            this.max = properties.limits().maxChannelCapacity();
        }

        @Override
        public boolean isValid(Integer capacity, ConstraintValidatorContext context) {
            return capacity == null || capacity <= max || between(context, 0, max, capacity);
        }
    }

    /** The violation of a range, with the value sent; false. */
    private static boolean between(ConstraintValidatorContext context, long min, long max, Object was) {
        context.disableDefaultConstraintViolation();
        context.buildConstraintViolationWithTemplate("must be between " + min + " and " + max + ", was " + was).addConstraintViolation();
        return false;
    }
}
