package dev.jobapi.common.acceptance;

import com.fasterxml.jackson.annotation.JsonValue;
import dev.jobapi.common.state.IllegalTransitionException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The life of one acceptance run (docs/design.md, rule 12), as provider_acceptance's CHECK
 * constraint names them. The table here is the one statement of the legal moves; the conditional
 * updates of {@link AcceptanceRuns} each make one of them and guard it in their WHERE clause,
 * and AcceptanceRunsTest holds them to this table for every source state.
 */
public enum AcceptanceState {
    /** Asked for by an operator; at most one requested or running run per provider. */
    REQUESTED,
    /**
     * A worker holds it under a lease and runs its tasks. A run whose lease ran out is claimed again
     * by another worker (running to running), starting over from its first task.
     */
    RUNNING,
    /** Terminal: every task passed; automatic fallback may move to the provider while it is fresh. */
    PASSED,
    /** Terminal: some task failed, or the run had no task. */
    FAILED;

    private Set<AcceptanceState> targets() {
        return switch (this) {
            case REQUESTED -> EnumSet.of(RUNNING);
            case RUNNING -> EnumSet.of(RUNNING, PASSED, FAILED);
            case PASSED, FAILED -> EnumSet.noneOf(AcceptanceState.class);
        };
    }

    public boolean canMoveTo(AcceptanceState target) {
        return targets().contains(target);
    }

    /** The one guard of this machine: throws with a plain message when the move is illegal. */
    public void guardMoveTo(AcceptanceState target) {
        if (!canMoveTo(target)) {
            throw new IllegalTransitionException("acceptance run", this, target);
        }
    }

    /** Passed or failed: the runs automatic fallback goes by. */
    public boolean isFinished() {
        return targets().isEmpty();
    }

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The wire names of the states {@code which} selects, for a SQL array parameter ({@code state =
     * ANY(?)}): a state set in SQL is derived from this enum, never written as literals
     * ({@code SqlStateLiteralsTest}).
     */
    public static String[] wireNames(Predicate<AcceptanceState> which) {
        return Arrays.stream(values())
                .filter(which)
                .map(AcceptanceState::wireName)
                .toArray(String[]::new);
    }

    public static AcceptanceState fromWireName(String wireName) {
        return valueOf(wireName.toUpperCase(Locale.ROOT));
    }
}
