package io.gosched.example;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.gosched.handler.JobContext;
import io.gosched.handler.JobHandler;
import jakarta.validation.constraints.NotBlank;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * A handler that calls an HTTP service with the JDK's blocking client: blocking = true, so that its
 * wait hands the goroutine's P to another M instead of holding it (docs/handlers.md).
 */
@Component
public class QuoteHandler {

    public record Quote(@NotBlank String symbol) {}

    public record Price(String symbol, int status, String body, int attempt) {}

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI service;

    public QuoteHandler(@Value("${example.quotes.url:http://127.0.0.1:9000/quotes/}") URI service) {
        this.service = service;
    }

    @JobHandler(value = "quote", blocking = true, description = "Asks the quote service for a symbol's price")
    public Price quote(Quote args, JobContext ctx) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(service.resolve(args.symbol()))
                .timeout(Duration.ofSeconds(10))
                .header("Idempotency-Key", ctx.jobId()) // the same on every attempt: the service may drop duplicates
                .GET().build();
        HttpResponse<String> answer = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() >= 500) {
            throw new IllegalStateException("quote service answered " + answer.statusCode()); // retried under the job's policy
        }
        return new Price(args.symbol(), answer.statusCode(), answer.body(), ctx.attempt());
    }
}
