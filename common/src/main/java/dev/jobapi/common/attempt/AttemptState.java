package dev.jobapi.common.attempt;

import com.fasterxml.jackson.annotation.JsonValue;
import dev.jobapi.common.state.IllegalTransitionException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The life of one attempt at one provider. The transition table here is the only place that says
 * which moves are legal; {@link Attempt}'s intent-named methods all go through {@link #guardMoveTo}.
 */
public enum AttemptState {
    /**
     * Made by the API with its outbox row. A worker claims it and calls the provider; the result moves
     * it to succeeded (winner), superseded (loser), failed, or unknown (sent, answer lost).
     */
    STARTING,
    /**
     * This attempt won the job; its stored generation is the one applied. Only a target that refuses
     * the patch for good (missing base ref, conflict, refused path) moves it on, to failed, releasing
     * the job for another attempt.
     */
    SUCCEEDED,
    /** Terminal: the provider refused or the stream broke; a fresh attempt may follow. */
    FAILED,
    /**
     * The provider may have the request but we do not know what it did. Moved in by a lost answer or
     * lease (the worker) and by an operator who released a quarantined attempt with its usage; moved
     * out by reconciliation (lookup or signed callback), the election of a stored result, or a
     * reviewer's supersession. It blocks fallback until then.
     */
    UNKNOWN,
    /** Terminal: another attempt won, the job closed, or a reviewer replaced it. Output kept, never applied. */
    SUPERSEDED,
    /**
     * The provider answered but reported no usage (rule 9 fails closed): the output is stored and
     * held, never elected, never looked up again. Moved in by the worker (record, election or
     * reconciliation step); moved out only by an operator, to unknown with the reconciled usage (the
     * election then takes it like any stored result) or to failed, or by a reviewer's supersession or
     * a job that closed. Not terminal; open, so it blocks a new attempt.
     */
    QUARANTINED;

    private Set<AttemptState> targets() {
        return switch (this) {
            case STARTING -> EnumSet.of(SUCCEEDED, FAILED, UNKNOWN, QUARANTINED, SUPERSEDED);
            case UNKNOWN -> EnumSet.of(SUCCEEDED, FAILED, QUARANTINED, SUPERSEDED);
            case QUARANTINED -> EnumSet.of(UNKNOWN, FAILED, SUPERSEDED);
            case SUCCEEDED -> EnumSet.of(FAILED);
            case FAILED, SUPERSEDED -> EnumSet.noneOf(AttemptState.class);
        };
    }

    public boolean canMoveTo(AttemptState target) {
        return targets().contains(target);
    }

    /** The one guard of this machine: throws with a plain message when the move is illegal. */
    public void guardMoveTo(AttemptState target) {
        if (!canMoveTo(target)) {
            throw new IllegalTransitionException("attempt", this, target);
        }
    }

    public boolean isTerminal() {
        return targets().isEmpty();
    }

    /**
     * Starting, unknown and quarantined attempts may still produce (or hold) a result, so they block a
     * new attempt.
     */
    public boolean isOpen() {
        return this == STARTING || this == UNKNOWN || this == QUARANTINED;
    }

    /**
     * Whether a result arriving from the provider (an answer, a lookup, a callback) may still move
     * this attempt. A quarantined attempt has its answer already and waits for an operator, so a
     * second answer is stored but changes nothing.
     */
    public boolean awaitsResult() {
        return this == STARTING || this == UNKNOWN;
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
    public static String[] wireNames(Predicate<AttemptState> which) {
        return Arrays.stream(values()).filter(which).map(AttemptState::wireName).toArray(String[]::new);
    }

    public static AttemptState fromWireName(String wireName) {
        return valueOf(wireName.toUpperCase(Locale.ROOT));
    }
}
