package dev.jobapi.worker.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.worker.FakeProviderResource;
import dev.jobapi.worker.WorkerTestSupport;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A step loads its attempt and job with plain SQL and writes back, through a stateless session that
 * checks each row's {@code @Version}, only the rows its body changed: a row written for nothing
 * would raise its version and make a concurrent step on it run again for nothing.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class AttemptStepsTest extends WorkerTestSupport {

    @Inject
    AttemptSteps steps;

    @Test
    void aStepThatChangesNothingWritesNeitherRow() {
        UUID job = aJob("a step that only reads");
        UUID attempt = aStartingAttempt(job, "fake-a");
        String before = versions(job, attempt);

        String seen = steps.run(
                attempt,
                "missing",
                step -> step.attempt().state().wireName() + " of "
                        + step.job().state().wireName());

        assertThat(seen).isEqualTo("starting of accepted");
        assertThat(versions(job, attempt)).isEqualTo(before);
    }

    @Test
    void aStepWritesTheRowItChangedAndOnlyThatOne() {
        UUID job = aJob("a step that changes its attempt");
        UUID attempt = aStartingAttempt(job, "fake-a");
        long jobVersion = count("SELECT version FROM job WHERE id = '" + job + "'");
        long attemptVersion = count("SELECT version FROM attempt WHERE id = '" + attempt + "'");

        steps.run(attempt, false, step -> {
            step.attempt().recordRemoteId("remote-7", step.now());
            return true;
        });

        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("remote-7");
        assertThat(count("SELECT version FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo(attemptVersion + 1);
        assertThat(count("SELECT version FROM job WHERE id = '" + job + "'")).isEqualTo(jobVersion);
    }

    @Test
    void aChangedAttemptThatAnotherTransactionWroteSinceTheLoadRunsTheStepAgain() {
        UUID job = aJob("a step whose attempt changed since its load");
        UUID attempt = aStartingAttempt(job, "fake-a");
        AtomicInteger runs = new AtomicInteger();

        steps.run(attempt, false, step -> {
            if (runs.incrementAndGet() == 1) {
                // Committed between this run's load and its write: a reviewer's note, say.
                assertThat(steps.run(attempt, false, other -> {
                            other.attempt().recordRemoteId("remote-first", other.now());
                            return true;
                        }))
                        .isTrue();
            }
            step.attempt().recordRemoteId("remote-second-run-" + runs.get(), step.now());
            return true;
        });

        assertThat(runs).as("the stale write failed its version check").hasValue(2);
        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("remote-second-run-2");
    }

    private String versions(UUID job, UUID attempt) {
        return text("SELECT j.version || '/' || j.xmin || ' ' || a.version || '/' || a.xmin"
                + " FROM job j JOIN attempt a ON a.job_id = j.id WHERE a.id = '" + attempt + "'");
    }
}
