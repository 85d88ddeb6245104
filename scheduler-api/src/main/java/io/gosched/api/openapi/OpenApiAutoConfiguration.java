package io.gosched.api.openapi;

import io.gosched.api.security.AccessRules;
import io.gosched.api.security.ApiSecurityAutoConfiguration;
import io.gosched.api.security.ApiSecurityProperties;
import io.gosched.api.security.SecurityMode;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.context.annotation.Bean;

/**
 * The served OpenAPI document, which describes the security the API runs with (its access rules
 * and mode): configured after that security, which knows nothing of the document.
 */
@AutoConfiguration(after = ApiSecurityAutoConfiguration.class)
@ConditionalOnBean(AccessRules.class)
public class OpenApiAutoConfiguration {

    /** The security schemes, each operation's requirement and its error answers in the served OpenAPI document. */
    @Bean
    public OpenApiDocument goschedOpenApiDocument(AccessRules rules, ApiSecurityProperties properties, SecurityMode mode) {
        return new OpenApiDocument(rules, properties.tokenUrl(), mode);
    }
}
