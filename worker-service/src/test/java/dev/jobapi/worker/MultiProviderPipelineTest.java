package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.fakeprovider.ReceivedRequest;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Named providers end to end: an attempt reaches its provider through the adapter its {@code kind}
 * names, with the configured model; a name the worker does not know fails the attempt once.
 */
@QuarkusTest
@TestProfile(MultiProviderPipelineTest.ModelsUnlikeTheirNames.class)
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class MultiProviderPipelineTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    /** Models that differ from the provider names, so the test can tell which one was sent. */
    public static class ModelsUnlikeTheirNames implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jobapi.provider.fake-anthropic.model", "claude-of-the-fake");
        }
    }

    @Test
    void attemptAtAnAnthropicProviderCompletesAndIsAppliedWithProviderReportedUsage() throws Exception {
        UUID job = aJob("anthropic path");
        UUID attempt = aStartingAttempt(job, "fake-anthropic");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));
        assertThat(attemptState(attempt)).isEqualTo("succeeded");
        assertThat(commitsOnJobBranch(job)).isEqualTo(1);
        ReceivedRequest request = requestsMatching("anthropic path").get(0);
        assertThat(request.path()).isEqualTo("/v1/messages");
        assertThat(request.model()).isEqualTo("claude-of-the-fake");
        // What a real provider needs and nothing more: the instruction and the job's input, no line
        // added so that a test double could tell the attempt apart (it matches on the model).
        assertThat(request.prompt())
                .isEqualTo("anthropic path\n\nJob input: " + text("SELECT input FROM job WHERE id = '" + job + "'"));
        assertThat(request.attemptId()).isEqualTo(attempt.toString());
        assertThat(request.requestKey()).isEqualTo("attempt-" + attempt);
        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo(request.remoteId())
                .startsWith("msg_");
        String usage = "FROM usage_record WHERE attempt_id = '" + attempt + "' AND source = 'provider_reported'";
        assertThat(count("SELECT prompt_tokens " + usage))
                .isEqualTo(request.usage().promptTokens());
        assertThat(count("SELECT completion_tokens " + usage))
                .isEqualTo(request.usage().completionTokens());
    }

    @Test
    void attemptNamingAProviderTheWorkerDoesNotConfigureFailsOnceWithTheReason() {
        UUID job = aJob("nobody configured");
        UUID attempt = aStartingAttempt(job, "nobody");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "failed".equals(attemptState(attempt)));
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + attempt + "'"))
                .contains("no provider named 'nobody' is configured");
        assertThat(requestsMatching("nobody configured")).isEmpty();
        assertThat(count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + attempt + "'"))
                .isZero();
    }
}
