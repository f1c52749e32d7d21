package dev.jobapi.common.attempt;

import com.fasterxml.jackson.annotation.JsonValue;
import dev.jobapi.common.state.IllegalTransitionException;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

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
     * The provider may have the request but we do not know what it did, or it did not report usage.
     * Only the reconciler or a reviewer moves it on. It blocks fallback until then.
     */
    UNKNOWN,
    /** Terminal: another attempt won, the job closed, or a reviewer replaced it. Output kept, never applied. */
    SUPERSEDED;

    private Set<AttemptState> targets() {
        return switch (this) {
            case STARTING -> EnumSet.of(SUCCEEDED, FAILED, UNKNOWN, SUPERSEDED);
            case UNKNOWN -> EnumSet.of(SUCCEEDED, FAILED, SUPERSEDED);
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

    /** Starting and unknown attempts may still produce a result, so they block a new attempt. */
    public boolean isOpen() {
        return this == STARTING || this == UNKNOWN;
    }

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static AttemptState fromWireName(String wireName) {
        return valueOf(wireName.toUpperCase(Locale.ROOT));
    }
}
