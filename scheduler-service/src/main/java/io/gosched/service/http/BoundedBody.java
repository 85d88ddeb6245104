package io.gosched.service.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * A response body kept in memory up to a bound: a body announced larger ({@code Content-Length})
 * is refused before a byte is read, and one that grows past the bound is cut off there (its
 * subscription cancelled, which closes the connection), so a target cannot make the service hold
 * more than a job's share of the memory budget.
 */
final class BoundedBody implements HttpResponse.BodyHandler<byte[]> {

    /** The body was larger than the bound. */
    static final class TooLargeException extends IOException {
        final long limit;

        TooLargeException(long limit) {
            super("the response body is larger than " + limit + " bytes, the most a job keeps");
            this.limit = limit;
        }
    }

    private final long limit;

    BoundedBody(long limit) {
        this.limit = limit;
    }

    @Override
    public HttpResponse.BodySubscriber<byte[]> apply(HttpResponse.ResponseInfo info) {
        long announced = info.headers().firstValueAsLong("content-length").orElse(-1);
        return new Subscriber(limit, announced > limit);
    }

    private static final class Subscriber implements HttpResponse.BodySubscriber<byte[]> {
        private final long limit;
        private final boolean refuse;
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private Flow.Subscription subscription;

        Subscriber(long limit, boolean refuse) {
            this.limit = limit;
            this.refuse = refuse;
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return result;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            if (refuse) {
                s.cancel();
                result.completeExceptionally(new TooLargeException(limit));
            } else {
                s.request(Long.MAX_VALUE);
            }
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            if (result.isDone()) {
                return;
            }
            for (ByteBuffer b : items) {
                if (bytes.size() + (long) b.remaining() > limit) {
                    subscription.cancel();
                    result.completeExceptionally(new TooLargeException(limit));
                    return;
                }
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                bytes.writeBytes(chunk);
            }
        }

        @Override
        public void onError(Throwable t) {
            result.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            result.complete(bytes.toByteArray());
        }
    }
}
