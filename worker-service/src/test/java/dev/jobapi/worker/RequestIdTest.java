package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.testing.CapturedLog;
import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import dev.jobapi.worker.consumer.AttemptConsumer;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.Test;

/**
 * The request id reaches the worker's work (docs/api.md, "Request ids"): the message's
 * {@code x-request-id} header is in the logging context of every line of its work, and in what that
 * work announces through the outbox.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class RequestIdTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Test
    void aLineLoggedWhileWorkingOnAMessageCarriesTheRequestIdOfItsHeader() {
        List<ExtLogRecord> lines;
        try (CapturedLog log = CapturedLog.of(AttemptConsumer.class)) {
            publishRaw("not an attempt message", Map.of("x-request-id", "req-w-1"));
            await().atMost(PATIENCE).until(() -> log.lines().stream()
                    .anyMatch(line -> line.getFormattedMessage().contains("not an attempt message")));
            lines = log.lines();
        }
        assertThat(lines)
                .filteredOn(line -> line.getFormattedMessage().contains("not an attempt message"))
                .singleElement()
                .satisfies(line -> assertThat(line.getMdc("requestId")).isEqualTo("req-w-1"));
    }

    @Test
    void anAutomaticFallbackIsAnnouncedWithTheRequestIdOfTheWorkThatFailed() {
        fake().addScript(Script.forModel("fake-a", Step.failing(400)));
        anAcceptanceRun("fake-b", "passed", Duration.ofHours(1));
        UUID job = aJobWithFallback("falls back", "fake-b");
        UUID first = aStartingAttempt(job, "fake-a");
        publishRaw(
                "{\"attemptId\":\"" + first + "\",\"jobId\":\"" + job + "\"}",
                Map.of("x-request-id", "submit-of-the-job"));

        String key = "automatic-fallback-after-" + first;
        await().atMost(PATIENCE)
                .until(() -> count("SELECT count(*) FROM outbox o JOIN attempt a ON a.id = o.attempt_id"
                                + " WHERE a.idempotency_key = '" + key + "'")
                        == 1);
        assertThat(text("SELECT o.request_id FROM outbox o JOIN attempt a ON a.id = o.attempt_id"
                        + " WHERE a.idempotency_key = '" + key + "'"))
                .isEqualTo("submit-of-the-job");
    }
}
