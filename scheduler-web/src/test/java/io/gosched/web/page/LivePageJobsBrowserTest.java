package io.gosched.web.page;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.support.ui.Select;
import org.springframework.boot.test.context.SpringBootTest;
import tools.jackson.databind.json.JsonMapper;

/**
 * The live page's jobs and goroutines with a token set, in Chromium: every link and action sends
 * the token (none opens a 401): a job's cancel and retry buttons, its detail view (state, attempts,
 * result, its goroutines), the full goroutine dump, the jobs filter; links are readable on the dark
 * panels; the header's goroutine count agrees with the goroutine table's.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "gosched.api.token=" + LivePageJobsBrowserTest.TOKEN)
class LivePageJobsBrowserTest extends LivePageSession {

    static final String TOKEN = "page-jobs-token-0123456789";

    @Test
    void jobsCanBeFilteredOpenedCancelledAndRetriedWithATokenSet() throws Exception {
        String sleeper = submit("{\"name\":\"sleeper\",\"workload\":{\"steps\":[{\"op\":\"spawn\",\"count\":3,"
                + "\"steps\":[{\"op\":\"sleep\",\"ms\":60000}]},{\"op\":\"wait\"}]}}");
        String failing = submit("{\"name\":\"failing\",\"workload\":{\"channels\":[{\"name\":\"c\"}],\"steps\":"
                + "[{\"op\":\"close\",\"channel\":\"c\"},{\"op\":\"close\",\"channel\":\"c\"}]}}");
        openLivePage();
        wait.until(d -> d.findElement(By.id("token")).isDisplayed());
        driver.findElement(By.id("token")).sendKeys(TOKEN, Keys.ENTER);
        wait.until(d -> d.findElement(By.id("conn")).getText().equals("live"));

        // The row of the running job has a cancel button; its link opens the detail, with its goroutines.
        wait.until(d -> state(sleeper).equals("running"));
        assertThat(text("#jobs tbody tr[data-job='" + sleeper + "'] button[data-cancel]")).isEqualTo("cancel");
        click("#jobs tbody tr[data-job='" + sleeper + "'] a[data-job-link]");
        wait.until(d -> d.findElement(By.id("detail")).isDisplayed() && count("#job-goroutines tbody tr") == 4);
        assertThat(text("#detail-title")).isEqualTo("job " + sleeper);
        assertThat(text("#job-fields")).contains("state running").contains("attempt 1 / 1");
        assertThat(text("#job-goroutines tbody")).as("each blocked goroutine's wait reason").contains("sync.WaitGroup.Wait");

        // Links are readable: not the browser's default blue, and at least 4.5:1 against the panel.
        String colour = (String) driver.executeScript("return getComputedStyle(document.querySelector("
                + "\"#jobs tbody a[data-job-link]\")).color;");
        assertThat(colour).isNotEqualTo("rgba(0, 0, 238, 1)");
        String panel = driver.findElement(By.cssSelector("section.panel")).getCssValue("background-color");
        assertThat(contrast(colour, panel)).as("contrast of %s on %s", colour, panel).isGreaterThanOrEqualTo(4.5);

        // The header's count and the table's describe the same goroutines: 4 of the sleeper, nothing else runs.
        wait.until(d -> d.findElement(By.id("goroutines")).getText().equals("4")
                && d.findElement(By.id("goroutines-total")).getText().equals("4"));
        assertThat(count("#goroutine-table tbody tr")).isEqualTo(4);

        // A job after the sleeper: waiting, its detail shows its after chain with the state of each, linked.
        String waiter = submit("{\"name\":\"waiter\",\"after\":[\"" + sleeper + "\"],\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}");
        wait.until(d -> state(waiter).equals("waiting"));
        click("#jobs tbody tr[data-job='" + waiter + "'] a[data-job-link]");
        wait.until(d -> text("#detail-title").equals("job " + waiter) && text("#job-after tbody tr").equals(sleeper + " running"));
        assertThat(text("#job-fields")).contains("state waiting");
        click("#job-after a[data-job-link]");
        wait.until(d -> text("#detail-title").equals("job " + sleeper) && count("#job-goroutines tbody tr") == 4);

        // Cancel from the detail; the row gets a retry button; retry runs it again as attempt 2.
        click("#detail button[data-cancel]");
        wait.until(d -> state(sleeper).equals("cancelled"));
        wait.until(d -> count("#job-attempts tbody tr") == 1);
        assertThat(text("#job-attempts tbody tr")).startsWith("1 cancelled");
        click("#jobs tbody tr[data-job='" + sleeper + "'] button[data-retry]");
        wait.until(d -> state(sleeper).equals("running") && text("#jobs tbody tr[data-job='" + sleeper + "']").contains("2 / 2"));

        // The full dump, fetched with the token and shown in the page.
        click("#goroutine-dump");
        wait.until(d -> text("#detail-title").equals("goroutine dump") && text("#dump-text").contains("goroutine "));

        // The filter: failed jobs only.
        new Select(driver.findElement(By.id("job-state-filter"))).selectByValue("failed");
        // The table is redrawn every 2 s: read it in one script, not element by element.
        wait.until(d -> failing.equals(driver.executeScript("const rows = document.querySelectorAll('#jobs tbody tr');"
                + " return rows.length === 1 && rows[0].querySelector('button[data-retry]') ? rows[0].dataset.job : null;")));
        Chromium.screenshot(driver, "live-page-jobs.png");
    }

    // The page redraws its tables as polls bring changes: read them in one script each (an element
    // found by one call may be gone at the next), and click what a selector finds at that moment.

    private String state(String id) {
        return text("#jobs tbody tr[data-job='" + id + "'] td.state");
    }

    private String text(String css) {
        Object t = driver.executeScript("const e = document.querySelector(arguments[0]); return e ? e.innerText.replace(/\\s+/g, ' ').trim() : '';", css);
        return t == null ? "" : t.toString();
    }

    private long count(String css) {
        return (Long) driver.executeScript("return document.querySelectorAll(arguments[0]).length;", css);
    }

    private void click(String css) {
        wait.until(d -> Boolean.TRUE.equals(driver.executeScript(
                "const e = document.querySelector(arguments[0]); if (!e) return false; e.click(); return true;", css)));
    }

    private String submit(String body) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/jobs"))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        return JsonMapper.builder().build().readTree(r.body()).get("id").asString();
    }

    /** WCAG contrast ratio of two CSS colours "rgb(a)(r, g, b[, a])". */
    static double contrast(String a, String b) {
        double la = luminance(a);
        double lb = luminance(b);
        return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
    }

    private static double luminance(String css) {
        String[] p = css.replaceAll("[^0-9.,]", "").split(",");
        double[] c = new double[3];
        for (int i = 0; i < 3; i++) {
            double v = Double.parseDouble(p[i]) / 255;
            c[i] = v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
        }
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    }
}
