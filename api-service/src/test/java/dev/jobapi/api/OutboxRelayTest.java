package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.GetResponse;
import dev.jobapi.api.mapping.JobSummary.InputPreview;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.service.JobIntake;
import dev.jobapi.api.service.RequestedDeadline;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.testing.TestBroker;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 3: no message for an uncommitted attempt, no committed attempt without a
 * message.
 */
@QuarkusTest
class OutboxRelayTest extends ApiTestSupport {

    @Inject
    JobIntake intake;

    @Inject
    MeterRegistry meters;

    @Test
    void committedAttemptIsPublishedAndMarkedSent() {
        String id = createJob(Tokens.user("alice"), "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String attemptId = as(Tokens.user("alice")).get("/jobs/" + id).path("attempts[0].id");
        List<String> received = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            received.addAll(TestBroker.drain(broker, AttemptTopology.QUEUE));
            assertThat(received)
                    .anySatisfy(body -> assertThat(body).contains(attemptId).contains(id));
        });
        await().atMost(Duration.ofSeconds(5))
                .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL") == 1);
    }

    /**
     * The relay's transactions are counted by outcome once they commit (bench/run takes them off the
     * database's commits to give the jobs' own): a batch that went out, and the rounds that found
     * nothing waiting.
     */
    @Test
    void everyCommittedRoundOfTheRelayIsCountedByItsOutcome() {
        double sentBefore = batches("sent");
        double refusedBefore = batches("refused");
        createJob(Tokens.user("alice"), "k-counted", JOB_BODY).then().statusCode(201);
        // Counted just after the commit that marked the row sent.
        await().atMost(Duration.ofSeconds(10)).until(() -> batches("sent") == sentBefore + 1);
        assertThat(count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL"))
                .isEqualTo(1);
        // The relay polls every 200 ms in tests: an idle round comes within a second.
        double emptyBefore = batches("empty");
        await().atMost(Duration.ofSeconds(5)).until(() -> batches("empty") > emptyBefore);
        assertThat(batches("sent")).isEqualTo(sentBefore + 1);
        assertThat(batches("refused")).isEqualTo(refusedBefore);
    }

    private double batches(String outcome) {
        return meters.get("jobapi.outbox.batches")
                .tag("outcome", outcome)
                .counter()
                .count();
    }

    /**
     * Issue 32, a fair share per owner: with the work queue at its share ({@code
     * jobapi.outbox.queue-ahead}), the rest of one owner's backlog waits in the outbox, and another
     * owner's next job goes out at the next turn, ahead of that backlog. Published in the outbox's
     * order, bob's job waited behind all of alice's.
     */
    @Test
    void anotherOwnersJobGoesOutAheadOfABacklogWaitingInTheOutbox() {
        int queueAhead = ConfigProvider.getConfig().getValue("jobapi.outbox.queue-ahead", Integer.class);
        int backlog = 2 * queueAhead + 8;
        for (int i = 0; i < backlog; i++) {
            createJob(Tokens.user("alice"), "backlog-" + i, JOB_BODY).then().statusCode(201);
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> TestBroker.depth(broker, AttemptTopology.QUEUE) == queueAhead);
        String bobsJob = createJob(Tokens.user("bob"), "bob-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        await().during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(5))
                .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NULL") == backlog - queueAhead + 1);

        // The workers take what was waiting; only that: a drain raced the relay's refill and took it too.
        TestBroker.take(broker, AttemptTopology.QUEUE, queueAhead);
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL AND job_id = '" + bobsJob + "'")
                                == 1);
        assertThat(count("SELECT count(*) FROM outbox WHERE sent_at IS NULL AND owner_id = 'alice'"))
                .as("alice's backlog still waits behind bob's job")
                .isPositive();
        // Bob's row goes out first in its turn; the rest of the turn refills the queue after it.
        await().atMost(Duration.ofSeconds(5))
                .until(() -> TestBroker.depth(broker, AttemptTopology.QUEUE) == queueAhead);
    }

    /**
     * An owner's weight (owner_share) is how many of its rows go out a turn: with alice at 3 and bob
     * at the default 1, the relay publishes three of alice's waiting jobs for each of bob's.
     */
    @Test
    void anOwnersWeightIsHowManyOfItsJobsGoOutEachTurn() {
        execute("INSERT INTO owner_share (owner_id, weight, set_by, reason, updated_at)"
                + " VALUES ('alice', 3, 'otto', 'a team of three', now())");
        int queueAhead = ConfigProvider.getConfig().getValue("jobapi.outbox.queue-ahead", Integer.class);
        for (int i = 0; i < queueAhead; i++) {
            createJob(Tokens.user("carol"), "filler-" + i, JOB_BODY).then().statusCode(201);
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> TestBroker.depth(broker, AttemptTopology.QUEUE) == queueAhead);
        for (int i = 0; i < 12; i++) {
            createJob(Tokens.user("alice"), "weighted-" + i, JOB_BODY).then().statusCode(201);
            if (i % 3 == 0) {
                createJob(Tokens.user("bob"), "weighted-" + i, JOB_BODY).then().statusCode(201);
            }
        }
        await().during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(5))
                .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NULL") == 16);

        TestBroker.take(broker, AttemptTopology.QUEUE, queueAhead); // carol's, and not the refill
        await().atMost(Duration.ofSeconds(10)).until(() -> TestBroker.depth(broker, AttemptTopology.QUEUE) == 16);
        List<String> owners = TestBroker.drain(broker, AttemptTopology.QUEUE).stream()
                .map(message -> text("SELECT owner_id FROM job WHERE id = '"
                        + message.replaceAll(".*\"jobId\":\"([^\"]+)\".*", "$1") + "'"))
                .toList();
        // Each turn is three of alice's and one of bob's, in the order they were written.
        for (int turn = 0; turn < 4; turn++) {
            assertThat(owners.subList(4 * turn, 4 * turn + 4))
                    .as("turn %d of %s", turn, owners)
                    .containsExactlyInAnyOrder("alice", "alice", "alice", "bob");
        }
    }

    /**
     * A publish the broker nacks is not sent: node losses and leader elections are when nacks
     * happen. A second queue bound to the work queue's routing key refuses every message
     * ({@code x-max-length} 0, {@code reject-publish}), so each publish of the row is routed to the
     * work queue and nacked all the same; the row must stay unsent until the broker takes it whole.
     */
    @Test
    void aRowWhosePublishTheBrokerNacksStaysUnsentAndIsSentOnceTheBrokerAcceptsIt() {
        String refusing = "test.refuses-every-message";
        broker.withChannel(channel -> {
            channel.queueDeclare(
                    refusing, false, false, true, Map.of("x-max-length", 0, "x-overflow", "reject-publish"));
            return channel.queueBind(refusing, AttemptTopology.EXCHANGE, AttemptTopology.ROUTING_KEY);
        });
        double refusedBefore = batches("refused");
        try {
            createJob(Tokens.user("alice"), "k-nacked", JOB_BODY).then().statusCode(201);
            // The relay polls every 200 ms in tests: two seconds are ten rounds, each publishing and nacked.
            await().during(Duration.ofSeconds(2))
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NULL") == 1);
            assertThat(TestBroker.depth(broker, AttemptTopology.QUEUE)).isPositive();
            assertThat(batches("refused")).isGreaterThan(refusedBefore);
        } finally {
            broker.withChannel(channel -> channel.queueDelete(refusing));
        }
        await().atMost(Duration.ofSeconds(10))
                .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL") == 1);
    }

    @Test
    void withNoCollectorConfiguredTracingIsOffAndTheRowKeepsNoTrace() {
        // This profile names no OTLP endpoint, as bin/dev up does not: the SDK stays disabled.
        assertThat(ConfigProvider.getConfig().getValue("quarkus.otel.sdk.disabled", Boolean.class))
                .isTrue();
        createJob(Tokens.user("alice"), "k-untraced", JOB_BODY).then().statusCode(201);
        assertThat(count("SELECT count(*) FROM outbox WHERE traceparent IS NULL"))
                .isEqualTo(1);
        GetResponse message = await().atMost(Duration.ofSeconds(10))
                .until(
                        () -> broker.withChannel(channel -> channel.basicGet(AttemptTopology.QUEUE, true)),
                        Objects::nonNull);
        assertThat(message.getProps().getHeaders()).doesNotContainKey("traceparent");
    }

    @Test
    void rolledBackIntakeLeavesNeitherRowNorMessage() {
        Caller alice = new Caller("alice", Set.of("user"));
        try {
            QuarkusTransaction.requiringNew().run(() -> {
                intake.submit(
                        alice,
                        "k-rolled-back",
                        "{}",
                        new InputPreview(null, null, null),
                        "fake-a",
                        List.of(),
                        RequestedDeadline.NONE,
                        "sha256:x");
                throw new IllegalStateException("the request failed after intake");
            });
        } catch (IllegalStateException expected) {
            // the surrounding transaction rolled back the job, its attempt and its outbox row
        }
        // A committed job in the same window proves the relay ran while we watched.
        createJob(Tokens.user("alice"), "k-committed", JOB_BODY).then().statusCode(201);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL") == 1);
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
        assertThat(TestBroker.drain(broker, AttemptTopology.QUEUE)).hasSize(1);
    }

    @Test
    void rowsLeftUnsentByACrashedReplicaAreRelayed() {
        String id = createJob(Tokens.user("alice"), "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL") == 1);
        TestBroker.drain(broker, AttemptTopology.QUEUE);
        // As if a replica committed the row and died before publishing it.
        execute("UPDATE outbox SET sent_at = NULL WHERE job_id = '" + id + "'");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(TestBroker.drain(broker, AttemptTopology.QUEUE))
                        .anySatisfy(body -> assertThat(body).contains(id)));
    }

    @Test
    void messageTheBrokerCannotRouteIsNotMarkedSentAndGoesOutOnceAQueueIsBoundAgain() {
        // The broker confirms an unroutable publish too: only a mandatory publish and its return tell
        // that nothing was queued.
        replaceTheWorkQueueByAnUnboundOne();
        try {
            String id = createJob(Tokens.user("alice"), "k-unroutable", JOB_BODY)
                    .then()
                    .statusCode(201)
                    .extract()
                    .path("id");
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> count("SELECT count(*) FROM outbox WHERE publish_attempts >= 2") == 1);
            assertThat(count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL"))
                    .isZero();
            assertThat(count("SELECT count(*) FROM outbox WHERE job_id = '" + id + "'"
                            + " AND last_error LIKE '%unroutable%'"))
                    .isEqualTo(1);

            broker.withChannel(channel -> channel.queueDelete(AttemptTopology.QUEUE));
            broker.declareTopology();
            await().atMost(Duration.ofSeconds(15))
                    .untilAsserted(() -> assertThat(TestBroker.drain(broker, AttemptTopology.QUEUE))
                            .anySatisfy(body -> assertThat(body).contains(id)));
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL") == 1);
        } finally {
            restoreTheTopology();
        }
    }

    @Test
    void relayBacksOffWhileTheBrokerRefusesEveryBatchAndStaysLive() {
        // More unsent rows than one batch, and a broker that routes none of them and cannot be healed:
        // the relay must not claim the same rows again at once, round after round.
        replaceTheWorkQueueByAnUnboundOne();
        try {
            createJob(Tokens.user("alice"), "k-refused", JOB_BODY).then().statusCode(201);
            execute("INSERT INTO outbox (attempt_id, job_id, created_at)"
                    + " SELECT attempt_id, job_id, now() FROM outbox, generate_series(1, 150)");
            // A round takes at most the room in the work queue (jobapi.outbox.queue-ahead, 32 here).
            int queueAhead = ConfigProvider.getConfig().getValue("jobapi.outbox.queue-ahead", Integer.class);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> count("SELECT count(*) FROM outbox WHERE publish_attempts > 0") >= queueAhead);
            long before = count("SELECT max(publish_attempts) FROM outbox");
            // 200 ms doubling: a handful of tries in 3 s, where a loop without a pause makes hundreds.
            await().during(Duration.ofSeconds(3))
                    .atMost(Duration.ofSeconds(4))
                    .until(() -> count("SELECT max(publish_attempts) FROM outbox") - before <= 6);
            management().get("/q/health/live").then().statusCode(200);
        } finally {
            restoreTheTopology();
        }
    }

    @Test
    void exchangeOrQueueDeletedUnderTheRelayIsDeclaredAgainAndTheMessageGoesOutWithoutARestart() {
        // An operator deletes the exchange (its bindings go with it) and then the work queue: nothing
        // else would declare them again while this process runs.
        broker.withChannel(channel -> channel.exchangeDelete(AttemptTopology.EXCHANGE));
        awaitMessageOfANewJob("k-no-exchange");

        broker.withChannel(channel -> channel.queueDelete(AttemptTopology.QUEUE));
        awaitMessageOfANewJob("k-no-queue");
        await().atMost(Duration.ofSeconds(5))
                .until(() -> count("SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL") == 2);
    }

    /** Makes a job and waits for its message in the work queue, which may be missing until the relay declares it. */
    private void awaitMessageOfANewJob(String key) {
        String id = createJob(Tokens.user("alice"), key, JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(() -> assertThat(
                        TestBroker.drain(broker, AttemptTopology.QUEUE))
                .anySatisfy(body -> assertThat(body).contains(id)));
    }

    /**
     * Replaces the work queue by an unbound one of the same name and other arguments: the exchange
     * routes to nothing, and the publisher's declaration of the topology fails, so it cannot heal.
     */
    private void replaceTheWorkQueueByAnUnboundOne() {
        broker.withChannel(channel -> channel.queueDelete(AttemptTopology.QUEUE));
        broker.withChannel(channel -> channel.queueDeclare(AttemptTopology.QUEUE, true, false, false, null));
    }

    private void restoreTheTopology() {
        broker.withChannel(channel -> channel.queueDelete(AttemptTopology.QUEUE));
        broker.declareTopology();
    }
}
