package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.common.budget.DailyBudgets;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.util.Map;

/** Refuses to start an attempt for an owner whose provider-reported spend today has reached their budget. */
@ApplicationScoped
public class Budgets {

    private final DailyBudgets budgets;

    Budgets(DailyBudgets budgets) {
        this.budgets = budgets;
    }

    /** Throws 429 budget-exceeded, with the figures, when the owner may not start another attempt today. */
    @Transactional(Transactional.TxType.MANDATORY)
    public void requireRoomFor(String ownerId) {
        budgets.spent(ownerId).ifPresent(spent -> {
            throw new ProblemException(
                    Problem.BUDGET_EXCEEDED,
                    "Providers reported " + spent.spentTokensToday() + " tokens spent today against a budget of "
                            + spent.budgetTokens() + "; new attempts start again tomorrow (UTC).",
                    Map.of(
                            "budgetTokens",
                            spent.budgetTokens(),
                            "spentTokensToday",
                            spent.spentTokensToday(),
                            "unknownSpendAttemptsToday",
                            spent.unknownSpendAttemptsToday(),
                            "day",
                            spent.day().toString()));
        });
    }
}
