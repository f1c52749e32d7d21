package dev.jobapi.worker.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.worker.FakeProviderResource;
import dev.jobapi.worker.WorkerTestSupport;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Rule 6 rests on the job's version, not on a row lock: two elections of one job, each in its own
 * transaction with neither holding a lock, leave exactly one winner. The race is made certain by
 * committing the second election between the first one's load and its write. A consumer's thread
 * runs its steps in plain transactions and a thread with a request context under JTA: the race is
 * run in both.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class WinnerElectionRaceTest extends WorkerTestSupport {

    @Inject
    AttemptSteps steps;

    @Inject
    ElectionStep election;

    @Inject
    CurrentTransaction transaction;

    @Test
    void twoElectionsRacingWithoutARowLockLeaveOneWinnerAndTheOtherLoses() {
        race(false);
    }

    @Test
    void twoElectionsRacingInPlainTransactionsLeaveOneWinnerAndTheOtherLoses() {
        onAConsumersThread(() -> {
            race(true);
            return null;
        });
    }

    /** @param plain whether the stale election runs in a plain transaction (else under JTA) */
    private void race(boolean plain) {
        UUID job = aJob("two elections race");
        UUID first = aStartingAttempt(job, "fake-a");
        UUID second = aStartingAttempt(job, "fake-b");
        // Both answered with the provider's usage: their outputs and usage are recorded, as the record
        // step leaves them for the election (which holds an answer without usage instead of electing it).
        execute("UPDATE attempt SET output_digest = 'sha256:' || id WHERE job_id = '" + job + "'");
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) SELECT a.id, j.owner_id, a.provider, 5, 8, 'provider_reported', now()"
                + " FROM attempt a JOIN job j ON j.id = a.job_id WHERE a.job_id = '" + job + "'");
        AtomicInteger runsOfFirst = new AtomicInteger();
        AtomicBoolean staleRunInPlain = new AtomicBoolean();

        boolean firstWon = steps.run(first, false, step -> {
            if (runsOfFirst.incrementAndGet() == 1) {
                staleRunInPlain.set(transaction.inPlain());
                // The job is loaded at its old version; the other election commits now.
                assertThat(steps.run(second, false, election::elect)).isTrue();
                // As the record step leaves it when it stored the usage itself: the election reads no
                // usage row through the ORM, which would take the step under JTA.
                step.keepReportedUsageStored();
            }
            return election.elect(step);
        });

        assertThat(staleRunInPlain.get())
                .as("the stale election ran in a plain transaction")
                .isEqualTo(plain);
        assertThat(firstWon).isFalse();
        assertThat(runsOfFirst)
                .as("the stale write failed its version check and the step ran again")
                .hasValue(2);
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isEqualTo(second.toString());
        assertThat(attemptState(second)).isEqualTo("succeeded");
        assertThat(attemptState(first)).isEqualTo("superseded");
        assertThat(count("SELECT count(*) FROM attempt WHERE state = 'succeeded' AND job_id = '" + job + "'"))
                .isEqualTo(1);
    }
}
