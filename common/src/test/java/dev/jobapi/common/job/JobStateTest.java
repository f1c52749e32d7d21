package dev.jobapi.common.job;

import static dev.jobapi.common.job.JobState.ACCEPTED;
import static dev.jobapi.common.job.JobState.CANCELLED;
import static dev.jobapi.common.job.JobState.COMPLETED;
import static dev.jobapi.common.job.JobState.NEEDS_REVIEW;
import static dev.jobapi.common.job.JobState.RUNNING;
import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.state.TransitionTableAssertions;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The job transition table: for each source state, every allowed and every refused target. */
class JobStateTest {

    private static void assertTargets(JobState from, Set<JobState> allowed) {
        TransitionTableAssertions.assertTargets("job", from, allowed, JobState::canMoveTo, JobState::guardMoveTo);
    }

    @Test
    void acceptedMovesToRunningReviewCompletedOrCancelled() {
        assertTargets(ACCEPTED, EnumSet.of(RUNNING, NEEDS_REVIEW, COMPLETED, CANCELLED));
    }

    @Test
    void runningMovesToReviewCompletedOrCancelled() {
        assertTargets(RUNNING, EnumSet.of(NEEDS_REVIEW, COMPLETED, CANCELLED));
    }

    @Test
    void needsReviewMovesToRunningCompletedOrCancelled() {
        assertTargets(NEEDS_REVIEW, EnumSet.of(RUNNING, COMPLETED, CANCELLED));
    }

    @Test
    void completedIsTerminal() {
        assertTargets(COMPLETED, EnumSet.noneOf(JobState.class));
        assertThat(COMPLETED.isTerminal()).isTrue();
    }

    @Test
    void cancelledIsTerminal() {
        assertTargets(CANCELLED, EnumSet.noneOf(JobState.class));
        assertThat(CANCELLED.isTerminal()).isTrue();
    }
}
