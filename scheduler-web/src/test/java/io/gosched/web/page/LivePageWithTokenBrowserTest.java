package io.gosched.web.page;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.support.ui.Select;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * With {@code gosched.api.token} set, every {@code /api/v1} call (the stream included) needs the
 * bearer token: the page asks for it after the first 401 and then works as without auth.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "gosched.api.token=" + LivePageWithTokenBrowserTest.TOKEN)
class LivePageWithTokenBrowserTest extends LivePageSession {

    static final String TOKEN = "page-test-token-0123456789";

    @Test
    void asksForTheTokenThenStreamsAndStartsJobs() throws Exception {
        openLivePage();

        wait.until(d -> d.findElement(By.id("token")).isDisplayed());
        assertThat(driver.findElement(By.id("conn")).getText()).isEqualTo("token needed");
        assertThat(driver.findElements(By.cssSelector("#lanes .lane"))).isEmpty();

        driver.findElement(By.id("token")).sendKeys(TOKEN, Keys.ENTER);
        int procs = runtime.gomaxprocs();
        wait.until(d -> d.findElements(By.cssSelector("#lanes .lane")).size() == procs);
        wait.until(d -> d.findElement(By.id("conn")).getText().equals("live"));

        wait.until(d -> !new Select(d.findElement(By.id("template"))).getOptions().isEmpty());
        new Select(driver.findElement(By.id("template"))).selectByValue("fan-out-fan-in");
        driver.findElement(By.id("submit")).click();
        wait.until(d -> d.findElement(By.id("job-status")).getText().startsWith("job "));
        Chromium.screenshot(driver, "live-page-token.png");
    }
}
