package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.testing.TestBroker;
import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import dev.jobapi.worker.consumer.AttemptConsumer;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 8, with acks in batches: one ack covers several deliveries only when all of
 * them committed. Real broker, database and fake provider.
 */
@QuarkusTest
@TestProfile(BatchedAckTest.PatientReads.class)
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class BatchedAckTest extends WorkerTestSupport {

    /** The slow answer below is waited for, not turned into an unknown outcome at 2 s. */
    public static class PatientReads implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jobapi.providers.read-timeout", "60s");
        }
    }

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    /** How long the slow attempt's provider call takes: longer than the quick ones all need. */
    private static final long SLOW_ANSWER_MS = 15_000;

    @Inject
    AttemptConsumer consumer;

    @Test
    void anAckCoversSeveralDeliveriesOnlyWhenAllOfThemCommitted() throws Exception {
        // The slow attempt's delivery has the channel's lowest tag and is still at the provider when
        // the worker stops; the twelve behind it commit meanwhile (more than a batch of them). An ack
        // with multiple for any of theirs would settle the slow one too: the broker would never give
        // it back, and a worker killed before its commit would lose it.
        fake().addScript(Script.of("held at the provider", Step.delayed(SLOW_ANSWER_MS)));
        UUID slowJob = aJob("held at the provider");
        UUID slow = aStartingAttempt(slowJob, "fake-a");
        publish(slow, slowJob);
        await().atMost(PATIENCE)
                .until(() -> requestsMatching("held at the provider").size() == 1);

        Map<UUID, UUID> quick = new LinkedHashMap<>(); // attempt -> its job
        for (int i = 0; i < 12; i++) {
            UUID job = aJob(String.format("quick %02d", i));
            UUID attempt = aStartingAttempt(job, "fake-a");
            quick.put(attempt, job);
            publish(attempt, job);
        }
        await().atMost(Duration.ofMillis(SLOW_ANSWER_MS - 3_000))
                .until(() -> quick.values().stream().allMatch(job -> "completed".equals(jobState(job))));
        assertThat(attemptState(slow)).isEqualTo("starting");

        try {
            consumer.stopConsuming(); // the grace (1 s) runs out with the slow call still out
            await().alias("the slow attempt's message handed back by the broker")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> TestBroker.depth(broker, AttemptTopology.QUEUE) > 0);
            assertThat(TestBroker.depth(broker, AttemptTopology.QUEUE))
                    .as("only the slow one's message is back: the committed ones were acked, the waiting"
                            + " ones on the drain")
                    .isEqualTo(1);
        } finally {
            consumer.resume();
        }
        await().atMost(PATIENCE)
                .until(() -> "completed".equals(jobState(slowJob)) && events(slow, "message.redelivered") > 0);
        assertThat(requestsMatching("held at the provider")).hasSize(1);
        for (UUID attempt : quick.keySet()) {
            assertThat(events(attempt, "message.redelivered"))
                    .as("redeliveries of %s", attempt)
                    .isZero();
        }
        for (int i = 0; i < 12; i++) {
            assertThat(requestsMatching(String.format("quick %02d", i))).hasSize(1);
        }
        assertThat(deadLetters()).isEmpty();
    }
}
