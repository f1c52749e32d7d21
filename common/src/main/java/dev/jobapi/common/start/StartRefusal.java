package dev.jobapi.common.start;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.budget.DailyBudgets;
import dev.jobapi.common.budget.SpendBudgets;
import dev.jobapi.common.fallback.KillSwitch;
import dev.jobapi.common.job.JobState;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Why a new attempt may not start now, as {@link AttemptStarts} decides it. Each caller turns it
 * into its own answer: the API a problem (409 or 429), the worker an event on the job.
 */
public sealed interface StartRefusal {

    /** The reason in a plain sentence, as the job's timeline records it. */
    String reason();

    /** The job is cancelled or completed, or an attempt already won it. */
    record JobClosed(UUID jobId, JobState state, UUID winningAttemptId) implements StartRefusal {
        @Override
        public String reason() {
            return winningAttemptId != null
                    ? "job " + jobId + " was won by attempt " + winningAttemptId
                    : "job " + jobId + " is " + state.wireName();
        }
    }

    /** The kill switch is off (rule 11): no new attempt on an existing job, manual or automatic. */
    record SwitchedOff(KillSwitch.State position) implements StartRefusal {
        @Override
        public String reason() {
            return "kill switch is off (set by " + position.setBy() + ": " + position.reason() + ")";
        }
    }

    /** The job has as many attempts as one job may have ({@code jobapi.attempts.per-job}). */
    record AttemptLimitReached(UUID jobId, int attempts, int limit) implements StartRefusal {
        @Override
        public String reason() {
            return "job " + jobId + " has " + attempts + " attempts, the most one job may have (" + limit + ")";
        }
    }

    /** The owner's provider-reported spend today has reached their budget. */
    record BudgetSpent(String ownerId, DailyBudgets.Spent spent) implements StartRefusal {
        @Override
        public String reason() {
            return "owner " + ownerId + " spent " + spent.spentTokensToday()
                    + " provider-reported tokens today against a budget of " + spent.budgetTokens();
        }
    }

    /**
     * The owner's money budget for a period, of every provider or of the attempt's, has nothing left:
     * spent and reserved fill it (rule 20).
     */
    record SpendBudgetFull(String ownerId, SpendBudgets.Standing standing) implements StartRefusal {
        @Override
        public String reason() {
            return String.format(
                    "owner %s's %s of %s USD is full: %s USD spent, %s USD reserved",
                    ownerId,
                    standing.describe(),
                    standing.limitUsd().toPlainString(),
                    standing.spentUsd().toPlainString(),
                    standing.reservedUsd().toPlainString());
        }
    }

    /**
     * Attempts of the job may still produce a result (rule 2): a new one waits for them, or for a
     * reviewer who supersedes them with a reason.
     */
    record AttemptsOpen(List<Attempt> open) implements StartRefusal {
        @Override
        public String reason() {
            return "attempt(s) " + describe() + " may still produce a result";
        }

        /** The open attempts as "id (state), ...". */
        public String describe() {
            return open.stream()
                    .map(a -> a.id() + " (" + a.state().wireName() + ")")
                    .collect(Collectors.joining(", "));
        }
    }
}
