package dev.jobapi.common.job;

import com.fasterxml.jackson.annotation.JsonValue;
import dev.jobapi.common.state.IllegalTransitionException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The life of a job. The transition table here is the only place that says which moves are legal;
 * {@link Job}'s intent-named methods all go through {@link #guardMoveTo(JobState)}.
 */
public enum JobState {
    /** Made by POST /jobs with its first attempt. A worker's claim moves it to running; cancel closes it. */
    ACCEPTED,
    /** A worker claimed an attempt. Apply moves it to completed; an unknown attempt to needs_review. */
    RUNNING,
    /** An attempt's outcome is unknown. A reviewer's supersession or a reconciled result moves it on. */
    NEEDS_REVIEW,
    /** Terminal: the winning attempt's result was applied exactly once. */
    COMPLETED,
    /** Terminal: the owner cancelled. Late results are recorded, never applied. */
    CANCELLED;

    private Set<JobState> targets() {
        return switch (this) {
            case ACCEPTED -> EnumSet.of(RUNNING, NEEDS_REVIEW, COMPLETED, CANCELLED);
            case RUNNING -> EnumSet.of(NEEDS_REVIEW, COMPLETED, CANCELLED);
            case NEEDS_REVIEW -> EnumSet.of(RUNNING, COMPLETED, CANCELLED);
            case COMPLETED, CANCELLED -> EnumSet.noneOf(JobState.class);
        };
    }

    public boolean canMoveTo(JobState target) {
        return targets().contains(target);
    }

    /** The one guard of this machine: throws with a plain message when the move is illegal. */
    public void guardMoveTo(JobState target) {
        if (!canMoveTo(target)) {
            throw new IllegalTransitionException("job", this, target);
        }
    }

    public boolean isTerminal() {
        return targets().isEmpty();
    }

    /** The lower-case name used in the database, the API and the CHECK constraint. */
    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The wire names of the states {@code which} selects, for a SQL array parameter ({@code state =
     * ANY(?)}): a state set in SQL is derived from this enum, never written as literals
     * ({@code SqlStateLiteralsTest}).
     */
    public static String[] wireNames(Predicate<JobState> which) {
        return Arrays.stream(values()).filter(which).map(JobState::wireName).toArray(String[]::new);
    }

    public static JobState fromWireName(String wireName) {
        return valueOf(wireName.toUpperCase(Locale.ROOT));
    }
}
