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
 * Rule 7 across two deliveries of one winner: the apply key is reserved only by the job's winner as
 * committed, not as a delivery loaded it. The race is made certain by committing the first
 * delivery's whole apply, reserved and then refused by the target, between the second delivery's
 * load and its reservation.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class ApplyRaceTest extends WorkerTestSupport {

    @Inject
    AttemptSteps steps;

    @Inject
    ElectionStep election;

    @Inject
    ApplyStep apply;

    /**
     * CI's soak at 7fbe095: two workers' sweeps announced one attempt within 33 ms; the first
     * delivery's apply was refused and released the win, and the second, loaded before that, reserved
     * the key again, leaving a pending apply of an attempt that no longer won (invariants 1 and 2).
     */
    @Test
    void aDeliveryLoadedBeforeARefusedApplyReleasedTheWinReservesNothing() {
        UUID job = aJob("apply refused, delivered twice");
        UUID winner = aStartingAttempt(job, "fake-a");
        execute("INSERT INTO generation (attempt_id, patch, output_digest, created_at) VALUES ('" + winner
                + "', convert_to('--- a/README.md\n+++ b/README.md\n', 'UTF8'), 'sha256:race', now())");
        execute("UPDATE attempt SET output_digest = 'sha256:race' WHERE id = '" + winner + "'");
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) VALUES ('" + winner + "', 'alice', 'fake-a', 5, 8, 'provider_reported', now())");
        assertThat(steps.run(winner, false, election::elect)).isTrue();
        AtomicInteger runsOfSecond = new AtomicInteger();

        ApplyStep.Plan second = steps.run(winner, null, step -> {
            if (runsOfSecond.incrementAndGet() == 1) {
                // The job is loaded with its winner; the first delivery's apply is reserved, refused
                // by the target and its win released, all committed now.
                ApplyStep.Plan first = steps.run(winner, null, apply::reserve);
                steps.run(winner, null, refusing -> apply.refuse(refusing, first.key(), "no such base"));
            }
            return apply.reserve(step);
        });

        assertThat(second).as("nothing is left to apply").isNull();
        assertThat(runsOfSecond)
                .as("the stale reservation failed the job's version check and the step ran again")
                .hasValue(2);
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isZero();
        assertThat(jobState(job)).isEqualTo("needs_review");
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isNull();
    }
}
