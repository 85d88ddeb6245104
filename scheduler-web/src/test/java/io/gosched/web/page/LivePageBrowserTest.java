package io.gosched.web.page;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.Select;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;

/**
 * A real headless Chromium (Debian's {@code chromium} + {@code chromium-driver}) loads the live page
 * from the running service, sees one lane per P, starts a job with the page's own form and sees the
 * numbers move. Saves {@code target/live-page.png}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class LivePageBrowserTest extends LivePageSession {

    @org.springframework.beans.factory.annotation.Autowired
    org.springframework.test.web.reactive.server.WebTestClient http;

    @Test
    void showsOneLanePerPAndNumbersMoveAfterAJobStartedFromTheForm() throws Exception {
        openLivePage();
        int procs = runtime.gomaxprocs();
        wait.until(d -> d.findElements(By.cssSelector("#lanes .lane")).size() == procs);
        assertThat(driver.findElement(By.id("gomaxprocs")).getText()).isEqualTo(Integer.toString(procs));
        assertThat(driver.findElement(By.id("conn")).getText()).isEqualTo("live");
        for (int p = 0; p < procs; p++) {
            assertThat(driver.findElements(By.cssSelector(".lane[data-p=\"" + p + "\"]"))).as("lane of P%d", p).hasSize(1);
        }

        long createdBefore = number(driver.findElement(By.id("spawned")).getText());
        wait.until(d -> !new Select(d.findElement(By.id("template"))).getOptions().isEmpty());
        new Select(driver.findElement(By.id("template"))).selectByValue("fan-out-fan-in");
        driver.findElement(By.id("submit")).click();

        wait.until(d -> d.findElement(By.id("job-status")).getText().startsWith("job "));
        wait.until(d -> number(d.findElement(By.id("spawned")).getText()) > createdBefore);
        wait.until(d -> !d.findElements(By.cssSelector("#jobs tbody tr")).isEmpty());
        wait.until(d -> number(d.findElement(By.id("schedules")).getText()) > 0);

        // The schedules section lists a schedule with its rule and next fire, polled as the jobs are.
        http.post().uri("/api/v1/schedules").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"name\":\"page-hourly\",\"every\":\"PT1H\",\"job\":{\"template\":\"ping-pong\"}}").exchange()
                .expectStatus().isCreated();
        wait.until(d -> d.findElements(By.cssSelector("#schedule-table tr[data-schedule='page-hourly']")).stream()
                .anyMatch(r -> r.getText().contains("every PT1H") && r.findElement(By.cssSelector(".next-fire")).getText().matches("\\d{4}-.*Z")));

        Path target = Chromium.screenshot(driver, "live-page.png");
        assertThat(Files.size(target)).isGreaterThan(10_000);

        // The trace link records 5 s through the page's fetch (so a token would be sent) and saves it.
        driver.findElement(By.id("trace-link")).click();
        wait.until(d -> d.findElement(By.id("trace-status")).getText().startsWith("recording"));
        wait.until(d -> d.findElement(By.id("trace-status")).getText().startsWith("saved gosched-trace.json"));
    }

    /** The goroutine table shows a parked goroutine's state, wait reason and labels, and links to the dump. */
    @Test
    void theGoroutineTableShowsAParkedGoroutineWithItsWaitAndLabels() throws Exception {
        io.gosched.runtime.Chan<Integer> release = io.gosched.runtime.Chan.make();
        java.util.concurrent.atomic.AtomicLong id = new java.util.concurrent.atomic.AtomicLong();
        io.gosched.runtime.Go.withLabels(java.util.Map.of("browser", "test"), () -> runtime.go(() -> {
            id.set(io.gosched.runtime.Go.goid());
            release.recv();
        }));
        try {
            openLivePage();
            // The table is redrawn every 2 s: read a row's cells in one go, again if it was replaced meanwhile.
            java.util.concurrent.atomic.AtomicReference<java.util.List<String>> cells = new java.util.concurrent.atomic.AtomicReference<>();
            wait.until(d -> {
                try {
                    var rows = d.findElements(By.cssSelector("#goroutine-table tr[data-goid=\"" + id.get() + "\"]"));
                    if (id.get() == 0 || rows.isEmpty()) {
                        return false;
                    }
                    cells.set(rows.getFirst().findElements(By.tagName("td")).stream().map(org.openqa.selenium.WebElement::getText).toList());
                    return true;
                } catch (org.openqa.selenium.StaleElementReferenceException redrawn) {
                    return false;
                }
            });
            assertThat(cells.get().get(1)).isEqualTo("waiting");
            assertThat(cells.get().get(2)).isEqualTo("chan receive");
            assertThat(cells.get().get(4)).contains("browser=test");
            assertThat(cells.get().get(5)).contains("LivePageBrowserTest");
            assertThat(number(driver.findElement(By.id("goroutines-total")).getText())).isPositive();
            assertThat(driver.findElement(By.id("goroutine-dump")).getAttribute("href")).endsWith("/api/v1/debug/goroutines?format=text");
        } finally {
            release.close();
        }
    }

    private static long number(String text) {
        String digits = text.replaceAll("[^0-9]", "");
        return digits.isEmpty() ? -1 : Long.parseLong(digits);
    }
}
