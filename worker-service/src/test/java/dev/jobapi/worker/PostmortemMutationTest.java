package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import dev.jobapi.worker.apply.CrashingApplier;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The mutation check of the postmortem replay: with the apply key taken from a per-call counter
 * instead of the content, the redelivered apply looks new and the rule breaks. This test proves the
 * postmortem test has teeth; run it alone with
 * {@code ./mvnw -pl worker-service test -Dtest=PostmortemMutationTest}.
 */
@QuarkusTest
@TestProfile(PostmortemMutationTest.PerCallApplyKey.class)
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class PostmortemMutationTest extends WorkerTestSupport {

    /** Switches the apply key to the per-call counter. */
    public static class PerCallApplyKey implements QuarkusTestProfile {
        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(PerCallApplyKeys.class);
        }
    }

    @Inject
    CrashingApplier applier;

    @Test
    void perCallApplyKeyBreaksThePostmortemReplay() {
        fake().addScript(Script.of("postmortem", Step.failing(502), Step.failing(502), Step.ok()));
        applier.crashOnceAfterTheNextApply();
        UUID job = aJob("postmortem");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);
        // The resumed apply mints a new key, the database refuses a second apply of the job, and every
        // resume fails until the job waits in review, never completed: the invariant is broken.
        await().atMost(Duration.ofSeconds(30)).until(() -> "needs_review".equals(jobState(job)));
        assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                .contains("the apply of attempt " + attempt + " has failed 3 times");
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "' AND status = 'applied'"))
                .isZero();
    }
}
