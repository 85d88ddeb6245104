package io.gosched.api.testapp;

import java.util.Map;

import io.gosched.api.ApiProperties;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** {@link ApiProperties} as Boot would bind them, defaults included, for tests without a context. */
public final class TestProperties {

    private TestProperties() {}

    public static ApiProperties api(Map<String, String> overrides) {
        return new Binder(new MapConfigurationPropertySource(overrides)).bindOrCreate("gosched.api", ApiProperties.class);
    }
}
