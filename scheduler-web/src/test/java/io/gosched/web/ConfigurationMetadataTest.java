package io.gosched.web;

import io.gosched.service.ServiceProperties;
import io.gosched.service.http.HttpJobProperties;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.api.ApiProperties;
import io.gosched.service.runtime.RuntimeProperties;
import io.gosched.api.security.ApiSecurityProperties;
import io.gosched.cluster.ClusterProperties;
import io.gosched.web.telemetry.TelemetryProperties;
import io.gosched.web.trace.FlightProperties;
import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.ConfigurationProperties;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every {@code gosched.*} property has IDE metadata (the configuration processor's
 * {@code META-INF/spring-configuration-metadata.json} in each module's jar) with a description,
 * and its default is written once: in its {@code @ConfigurationProperties} record, not again in
 * {@code application.properties}.
 */
class ConfigurationMetadataTest {

    private static final List<Class<?>> PROPERTIES = List.of(ApiProperties.class, ServiceProperties.class, ApiSecurityProperties.class,
            RuntimeProperties.class, ClusterProperties.class, TelemetryProperties.class, FlightProperties.class,
            HttpJobProperties.class);

    @Test
    void everyGoschedPropertyHasMetadataWithADescription() throws Exception {
        Map<String, JsonNode> metadata = new HashMap<>();
        for (URL url : Collections.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                JsonMapper.builder().build().readTree(in).get("properties").valueStream()
                        .forEach(p -> metadata.put(p.get("name").asString(), p));
            }
        }
        List<String> expected = new ArrayList<>();
        for (Class<?> type : PROPERTIES) {
            ConfigurationProperties cp = type.getAnnotation(ConfigurationProperties.class);
            leaves(cp.value().isEmpty() ? cp.prefix() : cp.value(), type, expected);
        }
        assertThat(expected).as("properties found in the records").hasSizeGreaterThan(50);
        for (String name : expected) {
            assertThat(metadata).as("metadata of %s", name).containsKey(name);
            assertThat(metadata.get(name).path("description").asString()).as("description of %s", name).isNotBlank();
        }
    }

    @Test
    void applicationPropertiesRepeatsNoGoschedDefault() throws Exception {
        Properties app = new Properties();
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("application.properties")) {
            app.load(in);
        }
        assertThat(app.stringPropertyNames()).as("gosched.* keys in application.properties")
                .noneMatch(k -> k.startsWith("gosched."));
    }

    /** The bindable leaves of a properties record: nested records of ours are descended into. */
    private static void leaves(String prefix, Class<?> type, List<String> out) {
        for (RecordComponent c : type.getRecordComponents()) {
            String name = prefix + "." + kebab(c.getName());
            Class<?> t = c.getType();
            if (t.isRecord() && t.getName().startsWith("io.gosched.")) {
                leaves(name, t, out);
            } else {
                out.add(name);
            }
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }
}
