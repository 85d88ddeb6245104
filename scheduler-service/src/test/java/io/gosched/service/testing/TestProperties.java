package io.gosched.service.testing;

import java.util.Map;

import io.gosched.service.ServiceProperties;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** {@link ServiceProperties} as Boot would bind them, defaults included, for tests without a context. */
public final class TestProperties {

    private TestProperties() {}

    public static ServiceProperties service(Map<String, String> overrides) {
        return new Binder(new MapConfigurationPropertySource(overrides)).bindOrCreate("gosched.api", ServiceProperties.class);
    }
}
