package io.gosched.service.budget;

import java.util.List;

import io.gosched.service.ServiceProperties;

/**
 * The service's budget as one value its stores share: the memory budget and its shares, and the
 * bounds on open streams and pending channel calls (both also charged to the memory budget).
 *
 * @param memory        the one memory budget
 * @param sizes         its size and the per-channel and per-job shares, defaults applied
 * @param streams       SSE streams, telemetry and job events together
 * @param channelCalls  HTTP channel sends and receives in flight
 */
public record ServiceBudget(MemoryBudget memory, MemoryBudget.Sizes sizes, OpenLimit streams, OpenLimit channelCalls) {

    public static final String MAX_OPEN_STREAMS = "gosched.api.admission.max-open-streams";
    public static final String MAX_PENDING_CHANNEL_CALLS = "gosched.api.admission.max-pending-channel-calls";

    /**
     * What one open SSE stream holds: its connection, the response's buffers and the subscriber
     * chain; measured at 15.9 KB each with 1,000 open (docs/memory.md).
     */
    public static final long STREAM_BYTES = 16 * 1024;
    /** What one HTTP channel call in flight holds besides its value: connection, future, timer, callbacks (1-2.3 KB measured). */
    public static final long CHANNEL_CALL_BYTES = 4 * 1024;

    /**
     * The budget the properties describe on a heap of {@code maxHeap} bytes, its meters registered.
     *
     * @throws IllegalStateException naming the property when a size does not fit the heap
     */
    public static ServiceBudget of(ServiceProperties properties, long maxHeap, BudgetMeters metrics) {
        MemoryBudget.Sizes sizes = MemoryBudget.Sizes.of(properties.limits(), maxHeap);
        MemoryBudget memory = new MemoryBudget(sizes.maxRetainedBytes(), properties.admission().retryAfter(), metrics);
        ServiceProperties.Admission a = properties.admission();
        OpenLimit streams = new OpenLimit(MAX_OPEN_STREAMS, a.maxOpenStreams(), "SSE streams", Retained.STREAMS, STREAM_BYTES, memory);
        OpenLimit calls = new OpenLimit(MAX_PENDING_CHANNEL_CALLS, a.maxPendingChannelCalls(), "HTTP channel calls",
                Retained.CHANNEL_CALLS, CHANNEL_CALL_BYTES, memory);
        metrics.budget(memory, streams, calls, List.of(MemoryBudget.MAX_RETAINED_BYTES, MemoryBudget.MAX_CHANNEL_BYTES,
                MemoryBudget.MAX_JOB_BYTES, MAX_OPEN_STREAMS, MAX_PENDING_CHANNEL_CALLS).stream().map(MemoryBudget::shortName).toList());
        return new ServiceBudget(memory, sizes, streams, calls);
    }

    /** The budget on this JVM's heap. */
    public static ServiceBudget of(ServiceProperties properties, BudgetMeters metrics) {
        return of(properties, Runtime.getRuntime().maxMemory(), metrics);
    }
}
