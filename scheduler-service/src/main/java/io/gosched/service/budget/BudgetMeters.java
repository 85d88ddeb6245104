package io.gosched.service.budget;

import java.util.List;

/**
 * Where the budget reports to: the service's meters implement it. The budget knows only this,
 * so the meters may read the budget (its gauges) without the two depending on each other.
 */
public interface BudgetMeters {

    /**
     * Registers the gauges of budget, streams and channelCalls, and a refusal counter for each of
     * budgets (the properties' last segments), so that every series exists before its first event.
     */
    void budget(MemoryBudget budget, OpenLimit streams, OpenLimit channelCalls, List<String> budgets);

    /** A request refused by {@code budget} (the property's last segment, e.g. {@code max-retained-bytes}). */
    void budgetRefused(String budget);
}
