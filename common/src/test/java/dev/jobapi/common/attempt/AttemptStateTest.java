package dev.jobapi.common.attempt;

import static dev.jobapi.common.attempt.AttemptState.FAILED;
import static dev.jobapi.common.attempt.AttemptState.STARTING;
import static dev.jobapi.common.attempt.AttemptState.SUCCEEDED;
import static dev.jobapi.common.attempt.AttemptState.SUPERSEDED;
import static dev.jobapi.common.attempt.AttemptState.UNKNOWN;
import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.state.TransitionTableAssertions;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The attempt transition table: for each source state, every allowed and every refused target. */
class AttemptStateTest {

    private static void assertTargets(AttemptState from, Set<AttemptState> allowed) {
        TransitionTableAssertions.assertTargets(
                "attempt", from, allowed, AttemptState::canMoveTo, AttemptState::guardMoveTo);
    }

    @Test
    void startingMovesToEveryOutcome() {
        assertTargets(STARTING, EnumSet.of(SUCCEEDED, FAILED, UNKNOWN, SUPERSEDED));
        assertThat(STARTING.isOpen()).isTrue();
    }

    @Test
    void unknownMovesToSucceededFailedOrSupersededButNeverBackToStarting() {
        assertTargets(UNKNOWN, EnumSet.of(SUCCEEDED, FAILED, SUPERSEDED));
        assertThat(UNKNOWN.isOpen()).isTrue();
    }

    @Test
    void succeededMovesOnlyToFailedWhenTheTargetRefusesThePatch() {
        assertTargets(SUCCEEDED, EnumSet.of(FAILED));
        assertThat(SUCCEEDED.isOpen()).isFalse();
    }

    @Test
    void failedIsTerminal() {
        assertTargets(FAILED, EnumSet.noneOf(AttemptState.class));
    }

    @Test
    void supersededIsTerminal() {
        assertTargets(SUPERSEDED, EnumSet.noneOf(AttemptState.class));
    }
}
