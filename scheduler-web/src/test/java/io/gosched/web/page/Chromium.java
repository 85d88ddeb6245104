package io.gosched.web.page;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/** Debian's headless Chromium under Debian's chromedriver, with no network beyond loopback pages. */
final class Chromium {

    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    private Chromium() {}

    /** Skips the calling test where the packages are missing; else a driver on a fresh profile in {@code profile}. */
    static ChromeDriver start(Path profile) {
        assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "/usr/bin/chromium or /usr/bin/chromedriver missing: install Debian packages 'chromium chromium-driver' (CI does)");
        // Explicit driver and browser paths: Selenium Manager never runs, so nothing is downloaded.
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,1300", "--user-data-dir=" + profile);
        return new ChromeDriver(service, options);
    }

    /** Saves a screenshot under target/ and returns its path. */
    static Path screenshot(ChromeDriver driver, String name) throws IOException {
        File shot = driver.getScreenshotAs(OutputType.FILE);
        Path target = Path.of("target", name);
        Files.createDirectories(target.getParent());
        Files.copy(shot.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
        return target;
    }
}
