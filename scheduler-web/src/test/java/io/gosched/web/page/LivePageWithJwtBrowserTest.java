package io.gosched.web.page;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.web.security.LocalIdentityProvider;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Behind an identity provider the live page works with a JWT as with the static token, and says so
 * when a token lacks a scope: the stream needs any scope of the service, starting a job needs
 * jobs:write.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class LivePageWithJwtBrowserTest extends LivePageSession {

    static final LocalIdentityProvider IDP = LocalIdentityProvider.start();

    @DynamicPropertySource
    static void identityProvider(DynamicPropertyRegistry registry) {
        registry.add("spring.security.oauth2.resourceserver.jwt.jwk-set-uri", IDP::jwkSetUri);
    }

    @AfterAll
    static void stopProvider() {
        IDP.close();
    }

    @Test
    void aTokenWithoutTheScopeIsNamedAndAnotherCanBeGiven() throws Exception {
        openLivePage();
        wait.until(d -> d.findElement(By.id("token")).isDisplayed());

        enterToken(IDP.token(List.of("openid")));
        wait.until(d -> d.findElement(By.id("conn")).getText().equals("token lacks a scope"));

        enterToken(IDP.token(List.of("jobs:read")));
        int procs = runtime.gomaxprocs();
        wait.until(d -> d.findElements(By.cssSelector("#lanes .lane")).size() == procs);
        wait.until(d -> d.findElement(By.id("conn")).getText().equals("live"));
        wait.until(d -> !new Select(d.findElement(By.id("template"))).getOptions().isEmpty());
        driver.findElement(By.id("submit")).click();
        wait.until(d -> d.findElement(By.id("job-status")).getText().startsWith("403: "));
        assertThat(driver.findElement(By.id("job-status")).getText()).contains("jobs:write");
        assertThat(driver.findElement(By.id("token")).isDisplayed()).as("the page offers to change the token").isTrue();

        enterToken(IDP.token(List.of("jobs:read", "jobs:write")));
        wait.until(d -> !new Select(d.findElement(By.id("template"))).getOptions().isEmpty());
        new Select(driver.findElement(By.id("template"))).selectByValue("fan-out-fan-in");
        driver.findElement(By.id("submit")).click();
        wait.until(d -> d.findElement(By.id("job-status")).getText().startsWith("job "));
        Chromium.screenshot(driver, "live-page-jwt.png");
    }

    private void enterToken(String token) {
        WebElement field = driver.findElement(By.id("token"));
        field.clear();
        field.sendKeys(token, Keys.ENTER);
    }
}
