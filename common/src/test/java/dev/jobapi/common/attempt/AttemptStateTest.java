package dev.jobapi.common.attempt;

import static dev.jobapi.common.attempt.AttemptState.FAILED;
import static dev.jobapi.common.attempt.AttemptState.QUARANTINED;
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
        assertTargets(STARTING, EnumSet.of(SUCCEEDED, FAILED, UNKNOWN, QUARANTINED, SUPERSEDED));
        assertThat(STARTING.isOpen()).isTrue();
        assertThat(STARTING.awaitsResult()).isTrue();
    }

    @Test
    void unknownMovesToSucceededFailedQuarantinedOrSupersededButNeverBackToStarting() {
        assertTargets(UNKNOWN, EnumSet.of(SUCCEEDED, FAILED, QUARANTINED, SUPERSEDED));
        assertThat(UNKNOWN.isOpen()).isTrue();
        assertThat(UNKNOWN.awaitsResult()).isTrue();
    }

    @Test
    void quarantinedIsNeverElectedAndLeavesOnlyThroughAnOperatorOrAReviewer() {
        // Released with its usage (unknown, then the election), failed, or superseded; never straight
        // to succeeded, which would elect an answer whose spend nobody recorded.
        assertTargets(QUARANTINED, EnumSet.of(UNKNOWN, FAILED, SUPERSEDED));
        assertThat(QUARANTINED.isOpen()).as("blocks a new attempt").isTrue();
        assertThat(QUARANTINED.awaitsResult())
                .as("a second answer changes nothing")
                .isFalse();
        assertThat(QUARANTINED.isTerminal()).isFalse();
    }

    @Test
    void succeededMovesOnlyToFailedWhenTheTargetRefusesThePatch() {
        assertTargets(SUCCEEDED, EnumSet.of(FAILED));
        assertThat(SUCCEEDED.isOpen()).isFalse();
        assertThat(SUCCEEDED.awaitsResult()).isFalse();
    }

    @Test
    void failedIsTerminal() {
        assertTargets(FAILED, EnumSet.noneOf(AttemptState.class));
        assertThat(FAILED.isOpen() || FAILED.awaitsResult()).isFalse();
    }

    @Test
    void supersededIsTerminal() {
        assertTargets(SUPERSEDED, EnumSet.noneOf(AttemptState.class));
        assertThat(SUPERSEDED.isOpen() || SUPERSEDED.awaitsResult()).isFalse();
    }
}
