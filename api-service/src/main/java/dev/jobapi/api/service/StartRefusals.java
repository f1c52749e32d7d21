package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.common.budget.DailyBudgets;
import dev.jobapi.common.budget.SpendBudgets;
import dev.jobapi.common.start.StartRefusal;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The API's answers to the common start policy's refusals (docs/design.md, rule 2): 409 job-closed,
 * fallback-disabled, attempt-limit-reached (with the figures) or review-required, 429 budget-exceeded
 * or spend-budget-exceeded with the figures.
 */
final class StartRefusals {

    private StartRefusals() {}

    static ProblemException problem(StartRefusal refusal) {
        if (refusal instanceof StartRefusal.JobClosed closed) {
            return new ProblemException(
                    Problem.JOB_CLOSED,
                    "Job " + closed.jobId() + " is " + closed.state().wireName() + "; it takes no new attempts.");
        }
        if (refusal instanceof StartRefusal.SwitchedOff off) {
            return new ProblemException(
                    Problem.FALLBACK_DISABLED,
                    "New attempts are switched off by " + off.position().setBy() + ": "
                            + off.position().reason());
        }
        if (refusal instanceof StartRefusal.AttemptLimitReached limit) {
            return new ProblemException(
                    Problem.ATTEMPT_LIMIT_REACHED,
                    "Job " + limit.jobId() + " has " + limit.attempts() + " attempts, the most one job may have;"
                            + " submit a new job to try again.",
                    Map.of("attempts", limit.attempts(), "limit", limit.limit()));
        }
        if (refusal instanceof StartRefusal.BudgetSpent budget) {
            DailyBudgets.Spent spent = budget.spent();
            return new ProblemException(
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
                            spent.day().toString()),
                    // The budget is per UTC day: the same request may start an attempt at midnight.
                    spent.day().plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant());
        }
        if (refusal instanceof StartRefusal.SpendBudgetFull full) {
            SpendBudgets.Standing standing = full.standing();
            SpendBudgets.Period period = standing.period();
            // A LinkedHashMap: provider is null for a budget of every provider, and Map.of takes no null.
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("period", period.wireName());
            figures.put("provider", standing.provider());
            figures.put("periodStartsOn", standing.startsOn().toString());
            figures.put("limitUsd", standing.limitUsd());
            figures.put("spentUsd", standing.spentUsd());
            figures.put("reservedUsd", standing.reservedUsd());
            return new ProblemException(
                    Problem.SPEND_BUDGET_EXCEEDED,
                    "The " + standing.describe() + " of "
                            + standing.limitUsd().toPlainString() + " USD holds "
                            + standing.spentUsd().toPlainString() + " USD spent and "
                            + standing.reservedUsd().toPlainString() + " USD reserved by calls under way.",
                    figures,
                    // Reservations settle as calls end, but only the next period is sure to have room.
                    period.nextStart(standing.startsOn())
                            .atStartOfDay(ZoneOffset.UTC)
                            .toInstant());
        }
        StartRefusal.AttemptsOpen open = (StartRefusal.AttemptsOpen) refusal;
        return new ProblemException(
                Problem.REVIEW_REQUIRED,
                "Attempt(s) " + open.describe() + " may still produce a result; a reviewer must supersede"
                        + " them with a reason before another provider is tried.");
    }
}
