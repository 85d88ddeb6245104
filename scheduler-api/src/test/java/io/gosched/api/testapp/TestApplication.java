package io.gosched.api.testapp;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * The application scheduler-api's tests run in: auto-configuration only (which brings in
 * scheduler-service's {@code GoschedServiceAutoConfiguration} and {@code GoschedApiAutoConfiguration}
 * exactly as scheduler-web will), no component scan.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TestApplication {}
