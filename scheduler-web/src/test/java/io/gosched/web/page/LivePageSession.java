package io.gosched.web.page;

import io.gosched.runtime.GoRuntime;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/** What the live page's browser tests share: the running service, its runtime, a fresh Chromium, and its end. */
abstract class LivePageSession {

    @LocalServerPort
    int port;

    @Autowired
    GoRuntime runtime;

    @TempDir
    Path profile;

    ChromeDriver driver;

    WebDriverWait wait;

    /** Starts Chromium on a fresh profile (the test is skipped where it is missing) and loads the live page. */
    void openLivePage() {
        driver = Chromium.start(profile);
        wait = new WebDriverWait(driver, Duration.ofSeconds(30));
        driver.get("http://127.0.0.1:" + port + "/");
    }

    @AfterEach
    void quit() {
        if (driver != null) {
            driver.quit();
        }
    }
}
