package io.gosched.api.budget;

import io.gosched.service.budget.ServiceBudget;

import io.gosched.service.budget.OpenLimit;

import io.gosched.service.budget.MemoryBudget;

import java.util.Map;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /api/v1/limits}: the memory budget and the open-request bounds, with their use now. */
@RestController
@Tag(name = "Limits", description = "The memory budget and the bounds on open requests")
class LimitsController {

    /** The memory budget: its size and shares, what it holds now and by whom. */
    record Memory(long maxBytes, long usedBytes, long maxChannelBytes, long maxJobBytes, Map<String, Long> heldBy) {}

    /** One bound on open requests. */
    record Open(String property, int max, int open) {}

    record Limits(Memory memory, Open streams, Open channelCalls) {}

    private final ServiceBudget budget;

    LimitsController(ServiceBudget budget) {
        this.budget = budget;
    }

    @GetMapping("/api/v1/limits")
    @Operation(operationId = "getLimits", summary = "The memory budget (size, use, what holds it) and the bounds on open streams and channel calls")
    Limits get() {
        MemoryBudget m = budget.memory();
        MemoryBudget.Sizes s = budget.sizes();
        return new Limits(new Memory(m.max(), m.used(), s.maxChannelBytes(), s.maxJobBytes(), m.heldBy()),
                open(budget.streams()), open(budget.channelCalls()));
    }

    private static Open open(OpenLimit l) {
        return new Open(l.property(), l.max(), l.open());
    }
}
