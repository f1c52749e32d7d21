package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.job.JobState;
import org.junit.jupiter.api.Test;

/** The soak's state sets are the ones the state machines derive (see {@link States}). */
class StatesTest {

    @Test
    void jobSetsAreTheOnesTheJobMachineDerives() {
        assertThat(States.TERMINAL_JOBS).containsExactlyInAnyOrder(JobState.wireNames(JobState::isTerminal));
        assertThat(States.TERMINAL_OR_REVIEWED_JOBS)
                .containsExactlyInAnyOrder(
                        JobState.wireNames(state -> state.isTerminal() || state == JobState.NEEDS_REVIEW));
        assertThat(States.UNSETTLED_JOBS)
                .containsExactlyInAnyOrder(
                        JobState.wireNames(state -> !state.isTerminal() && state != JobState.NEEDS_REVIEW));
    }

    @Test
    void attemptSetsAreTheOnesTheAttemptMachineDerives() {
        assertThat(States.LOOKUP_ATTEMPTS)
                .containsExactlyInAnyOrder(AttemptState.wireNames(
                        state -> state == AttemptState.UNKNOWN || state == AttemptState.SUPERSEDED));
        assertThat(States.OPEN_OR_SUCCEEDED_ATTEMPTS)
                .containsExactlyInAnyOrder(
                        AttemptState.wireNames(state -> state.isOpen() || state == AttemptState.SUCCEEDED));
    }
}
