package io.gosched.service.channel;

import java.util.regex.Pattern;

/**
 * What a channel's name may be (and a template's, and a workload's own channel's): short,
 * printable, safe in a URL path segment and as a NATS subject token. The one definition: the
 * DSL's reader, the HTTP request's constraint and the path's check all use it.
 */
public final class ChannelName {

    /** The pattern as text, for an annotation ({@code @Pattern(regexp = ChannelName.REGEXP)}). */
    public static final String REGEXP = "[A-Za-z0-9][A-Za-z0-9._-]{0,63}";

    public static final Pattern PATTERN = Pattern.compile(REGEXP);

    private ChannelName() {
    }

    /** True if {@code name} is a name a channel may have. */
    public static boolean isValid(String name) {
        return name != null && PATTERN.matcher(name).matches();
    }
}
