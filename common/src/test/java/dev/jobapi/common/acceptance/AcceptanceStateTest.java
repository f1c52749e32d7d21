package dev.jobapi.common.acceptance;

import static dev.jobapi.common.acceptance.AcceptanceState.FAILED;
import static dev.jobapi.common.acceptance.AcceptanceState.PASSED;
import static dev.jobapi.common.acceptance.AcceptanceState.REQUESTED;
import static dev.jobapi.common.acceptance.AcceptanceState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.state.TransitionTableAssertions;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The acceptance run's transition table: for each source state, every allowed and every refused target. */
class AcceptanceStateTest {

    private static void assertTargets(AcceptanceState from, Set<AcceptanceState> allowed) {
        TransitionTableAssertions.assertTargets(
                "acceptance run", from, allowed, AcceptanceState::canMoveTo, AcceptanceState::guardMoveTo);
    }

    @Test
    void requestedOnlyStartsRunning() {
        assertTargets(REQUESTED, EnumSet.of(RUNNING));
        assertThat(REQUESTED.isFinished()).isFalse();
    }

    @Test
    void runningFinishesOrIsTakenOverByAnotherWorker() {
        assertTargets(RUNNING, EnumSet.of(RUNNING, PASSED, FAILED));
        assertThat(RUNNING.isFinished()).isFalse();
    }

    @Test
    void passedAndFailedAreTerminal() {
        assertTargets(PASSED, EnumSet.noneOf(AcceptanceState.class));
        assertTargets(FAILED, EnumSet.noneOf(AcceptanceState.class));
        assertThat(PASSED.isFinished()).isTrue();
        assertThat(FAILED.isFinished()).isTrue();
    }

    @Test
    void wireNamesAreWhatTheTableAndTheApiSay() {
        for (AcceptanceState state : AcceptanceState.values()) {
            assertThat(AcceptanceState.fromWireName(state.wireName())).isEqualTo(state);
        }
        assertThat(PASSED.wireName()).isEqualTo("passed");
    }
}
