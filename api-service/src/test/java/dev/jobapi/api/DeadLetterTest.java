package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import dev.jobapi.api.contract.OutsideTheContract;
import dev.jobapi.api.deadletter.DeadLetterMover;
import dev.jobapi.api.deadletter.DeadLetterStore;
import dev.jobapi.common.message.AttemptMessage;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.testing.TestBroker;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Dead letters are rows (issue 30; docs/design.md, rule 13): the mover stores what the broker
 * dead-letters, acknowledging after the commit and once per message; a healthy attempt the broker
 * dropped at its delivery limit goes back to work (three times); the legacy queue is moved; replay
 * and discard act on rows by ids or filter, with a dry run, once each, audited in their transaction.
 * Every message here is dead-lettered by the broker itself (rejected, or over a quorum queue's
 * delivery limit), so its x-death header is real.
 */
@QuarkusTest
class DeadLetterTest extends ApiTestSupport {

    /** A quorum queue of the test's own whose messages die into jobs.attempts.dlx. */
    private static final String SOURCE = "test.dead-letter.source";

    @Inject
    DeadLetterMover mover;

    @Inject
    DeadLetterStore store;

    private final String alice = Tokens.user("alice");
    private final String otto = Tokens.of("otto", "operator");

    // ------------------------------------------------------------------ the mover

    @Test
    void aDeadLetterIsAcknowledgedOnlyAfterItsRowCommitted() {
        execute("CREATE OR REPLACE FUNCTION test_refuse_dead_letter() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
        execute("CREATE TRIGGER test_refuse_dead_letter BEFORE INSERT ON dead_letter"
                + " FOR EACH ROW EXECUTE FUNCTION test_refuse_dead_letter()");
        try {
            deadLetter("not an attempt message", "m-commit", false);
            // The mover got it (the queue is empty of ready messages) but could not commit its row.
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> TestBroker.depth(broker, AttemptTopology.DEAD_LETTER_QUEUE) == 0);
            await().during(Duration.ofSeconds(2))
                    .atMost(Duration.ofSeconds(4))
                    .until(() -> count("SELECT count(*) FROM dead_letter") == 0);
        } finally {
            execute("DROP TRIGGER test_refuse_dead_letter ON dead_letter");
        }
        // The message stayed on the broker, unacknowledged: the store is tried again and the row comes.
        await().atMost(Duration.ofSeconds(15))
                .until(() -> count("SELECT count(*) FROM dead_letter WHERE message_key = 'id:m-commit'") == 1);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE attempt_id IS NULL"))
                .isEqualTo(1);
    }

    @Test
    void aRedeliveredDeadLetterMakesNoSecondRow() {
        String body = new AttemptMessage(UUID.randomUUID(), UUID.randomUUID()).toJson();
        deadLetter(body, "m-twice", false);
        deadLetter(body, "m-twice", false);
        deadLetter(body, "m-other", false);
        await().atMost(Duration.ofSeconds(10)).until(() -> count("SELECT count(*) FROM dead_letter") == 2);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> TestBroker.depth(broker, AttemptTopology.DEAD_LETTER_QUEUE) == 0);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE message_key = 'id:m-twice'"))
                .isEqualTo(1);
        // Poison and unknown attempts are rows too; reason and deaths are the broker's.
        assertThat(count("SELECT count(*) FROM dead_letter WHERE reason = 'rejected' AND death_count = 1"))
                .isEqualTo(2);
    }

    @Test
    void deadLettersOfTheLegacyQueueAreMovedAndTheQueueDeleted() {
        broker.withChannel(channel -> {
            channel.queueDeclare(
                    AttemptTopology.LEGACY_DEAD_LETTER_QUEUE, true, false, false, Map.of("x-queue-type", "quorum"));
            channel.queueBind(AttemptTopology.LEGACY_DEAD_LETTER_QUEUE, AttemptTopology.DEAD_LETTER_EXCHANGE, "");
            channel.confirmSelect();
            for (int i = 0; i < 3; i++) {
                channel.basicPublish(
                        "",
                        AttemptTopology.LEGACY_DEAD_LETTER_QUEUE,
                        new AMQP.BasicProperties.Builder()
                                .messageId("legacy-" + i)
                                .deliveryMode(2)
                                .build(),
                        ("legacy poison " + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(5_000);
            return null;
        });

        assertThat(mover.moveLegacyDeadLetters()).isEqualTo(3);

        assertThat(count("SELECT count(*) FROM dead_letter WHERE source_queue = 'jobs.attempts.dlq'"))
                .isEqualTo(3);
        assertThat(legacyQueueExists()).isFalse();
        assertThat(mover.moveLegacyDeadLetters()).isZero(); // none left: a 404, nothing to do
    }

    @Test
    void aHealthyAttemptDroppedAtTheDeliveryLimitGoesBackToWorkThreeTimesThenIsStored() {
        String job = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        UUID attempt = UUID.fromString(as(alice).get("/jobs/" + job).path("attempts[0].id"));
        String body = new AttemptMessage(attempt, UUID.fromString(job)).toJson();
        awaitOnWorkQueue(attempt); // the relay's message

        for (int returns = 1; returns <= DeadLetterStore.MAX_RETURNS; returns++) {
            deadLetter(body, "limit-" + returns, true);
            awaitOnWorkQueue(attempt);
            assertThat(store.returns(attempt)).isEqualTo(returns);
            assertThat(count("SELECT count(*) FROM dead_letter")).isZero();
        }
        deadLetter(body, "limit-4", true);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> count("SELECT count(*) FROM dead_letter WHERE reason = 'delivery_limit' AND attempt_id = '"
                                + attempt + "' AND owner_id = 'alice' AND provider = 'fake-a'")
                        == 1);
        assertThat(TestBroker.drain(broker, AttemptTopology.QUEUE)).isEmpty();

        // The worker's own dead-lettering (rejected) is stored at once, open attempt or not.
        deadLetter(body, "rejected-1", false);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> count("SELECT count(*) FROM dead_letter WHERE reason = 'rejected'") == 1);
    }

    /**
     * A message the broker dropped at the delivery limit after its attempt had nothing left to do
     * (failed here; superseded in the clustered soak's run 7) carried no work: it is stored settled
     * {@code skipped}, for the record, and waits for no operator. The worker's own rejection of
     * such a message is stored pending, as every rejection is.
     */
    @Test
    void aDroppedMessageWhoseAttemptHasNothingLeftToDoIsStoredSettled() {
        String job = aliceJobWithFailedFirstAttempt();
        UUID attempt = UUID.fromString(as(alice).get("/jobs/" + job).path("attempts[0].id"));
        deadLetter(new AttemptMessage(attempt, UUID.fromString(job)).toJson(), "limit-done", true);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> count("SELECT count(*) FROM dead_letter WHERE reason = 'delivery_limit'"
                                + " AND settlement = 'skipped' AND settled_by = 'dead-letter-mover'")
                        == 1);
        assertThat(store.returns(attempt)).isZero();
        as(otto).get("/admin/dlq").then().statusCode(200).body("depth", equalTo(0));

        deadLetter(new AttemptMessage(attempt, UUID.fromString(job)).toJson(), "rejected-done", false);
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        count("SELECT count(*) FROM dead_letter WHERE reason = 'rejected'" + " AND settlement IS NULL")
                                == 1);
    }

    // ------------------------------------------------------------------ the operators' API

    @Test
    void aDryRunCountsAndSamplesAndChangesNothing() {
        List<UUID> attempts = List.of(aliceAttempt("k-1"), aliceAttempt("k-2"));
        attempts.forEach(a -> storedDeadLetter(a, "rejected"));
        storedPoison();
        long outbox = count("SELECT count(*) FROM outbox");

        // Listing reads rows: fifty listings (the console every 5 s for four minutes) lose nothing.
        for (int i = 0; i < 50; i++) {
            as(otto).get("/admin/dlq").then().statusCode(200).body("depth", equalTo(3));
        }
        as(otto).get("/admin/dlq?owner=alice&limit=1")
                .then()
                .statusCode(200)
                .body("depth", equalTo(2))
                .body("items", hasSize(1));

        String alices = idsOf("owner_id = 'alice'");
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":" + alices + ",\"dryRun\":true}")
                .post("/admin/dlq/replay")
                .then()
                .statusCode(200)
                .body("dryRun", equalTo(true))
                .body("replayed", equalTo(2))
                .body("sample", hasSize(2));
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":" + idsOf("true") + ",\"dryRun\":true,\"reason\":\"look first\"}")
                .post("/admin/dlq/discard")
                .then()
                .statusCode(200)
                .body("discarded", equalTo(3));

        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement IS NULL"))
                .isEqualTo(3);
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(outbox);
        assertThat(count("SELECT count(*) FROM audit_record")).isZero();

        // Executed, the same ids change what the dry run counted.
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":" + alices + "}")
                .post("/admin/dlq/replay")
                .then()
                .statusCode(200)
                .body("replayed", equalTo(2));
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(outbox + 2);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement = 'replayed' AND settled_by = 'otto'"))
                .isEqualTo(2);
        as(otto).get("/admin/dlq/count").then().statusCode(200).body("count", equalTo(1));
        as(otto).get("/admin/dlq/count?state=replayed").then().statusCode(200).body("count", equalTo(2));
    }

    @Test
    void concurrentReplaysPublishEachDeadLetterOnce() throws Exception {
        UUID attempt = aliceAttempt("k-1");
        int letters = 1_200;
        execute("INSERT INTO dead_letter (message_key, attempt_id, job_id, owner_id, provider, reason, death_count,"
                + " dead_lettered_at, source_queue, body) SELECT 'bulk-' || n, a.id, a.job_id, 'alice', a.provider,"
                + " 'rejected', 1, now(), 'jobs.attempts.dead-letters', convert_to('{}', 'UTF8')"
                + " FROM attempt a, generate_series(1, " + letters + ") n WHERE a.id = '" + attempt + "'");
        long outbox = count("SELECT count(*) FROM outbox");

        String ids = idsOf("true");
        int callers = 4;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            List<Future<Integer>> calls = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                calls.add(pool.submit((Callable<Integer>) () -> {
                    start.await();
                    return as(otto).contentType(ContentType.JSON)
                            .body("{\"ids\":" + ids + "}")
                            .post("/admin/dlq/replay")
                            .then()
                            .statusCode(200)
                            .extract()
                            .path("replayed");
                }));
            }
            start.countDown();
            int replayed = 0;
            for (Future<Integer> call : calls) {
                replayed += call.get();
            }
            assertThat(replayed).isEqualTo(letters);
        } finally {
            pool.shutdownNow();
        }
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(outbox + letters);
        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement = 'replayed'"))
                .isEqualTo(letters);
    }

    @Test
    void theAuditRecordCommitsWithTheReplayOrNeither() {
        UUID attempt = aliceAttempt("k-1");
        storedDeadLetter(attempt, "rejected");
        long outbox = count("SELECT count(*) FROM outbox");
        execute("CREATE OR REPLACE FUNCTION test_refuse_audit() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN RAISE EXCEPTION 'audit refused by the test'; END $$");
        execute("CREATE TRIGGER test_refuse_audit BEFORE INSERT ON audit_record"
                + " FOR EACH ROW EXECUTE FUNCTION test_refuse_audit()");
        String ids = idsOf("true");
        try {
            as(otto).contentType(ContentType.JSON)
                    .body("{\"ids\":" + ids + "}")
                    .post("/admin/dlq/replay")
                    .then()
                    .statusCode(500);
        } finally {
            execute("DROP TRIGGER test_refuse_audit ON audit_record");
        }
        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement IS NULL"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(outbox);

        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":" + ids + "}")
                .post("/admin/dlq/replay")
                .then()
                .statusCode(200)
                .body("replayed", equalTo(1));
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'dlq.replay' AND actor = 'otto'"))
                .isEqualTo(1);
    }

    @Test
    @OutsideTheContract("selections the document forbids on purpose: all, a filter, no ids")
    void discardNeedsAReasonAndBadFiltersAndSelectionsAreProblems() {
        storedPoison();
        as(otto).get("/admin/dlq?since=yesterday").then().statusCode(400).body("code", equalTo("invalid-query"));
        as(otto).get("/admin/dlq?since=2026-12-03T15:00:00Z&until=2026-12-03T14:00:00Z")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-query"));
        as(otto).get("/admin/dlq/count?state=lost").then().statusCode(400).body("code", equalTo("invalid-query"));
        as(otto).get("/admin/dlq?after=-1").then().statusCode(400).body("code", equalTo("invalid-query"));
        // A selection by filter is a bulk action, whose execution needs its dry run's token: never here.
        for (String selection :
                List.of("{\"all\":true}", "{\"filter\":{\"owner\":\"alice\"}}", "{\"all\":true,\"ids\":[\"1\"]}")) {
            as(otto).contentType(ContentType.JSON)
                    .body(selection)
                    .post("/admin/dlq/replay")
                    .then()
                    .statusCode(400)
                    .body("code", equalTo("invalid-request"))
                    .body("detail", containsString("/admin/bulk/dlq-replay/dry-run"));
        }
        as(otto).contentType(ContentType.JSON)
                .body("{\"filter\":{},\"reason\":\"everything\"}")
                .post("/admin/dlq/discard")
                .then()
                .statusCode(400)
                .body("detail", containsString("/admin/bulk/dlq-discard/dry-run"));
        for (String noIds : List.of("{}", "{\"ids\":[]}")) {
            as(otto).contentType(ContentType.JSON)
                    .body(noIds)
                    .post("/admin/dlq/replay")
                    .then()
                    .statusCode(400)
                    .body("code", equalTo("invalid-request"));
        }
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":[\"x\"]}")
                .post("/admin/dlq/replay")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
        String poison = idsOf("true");
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":" + poison + "}")
                .post("/admin/dlq/discard")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
        assertThat(count("SELECT count(*) FROM dead_letter WHERE settlement IS NULL"))
                .isEqualTo(1);

        // A replay leaves a poison message pending; a discard settles it, audited.
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":" + poison + "}")
                .post("/admin/dlq/replay")
                .then()
                .statusCode(200)
                .body("replayed", equalTo(0))
                .body("notReplayable", equalTo(1));
        as(otto).contentType(ContentType.JSON)
                .body("{\"ids\":" + poison + ",\"reason\":\"poison, reported upstream\"}")
                .post("/admin/dlq/discard")
                .then()
                .statusCode(200)
                .body("discarded", equalTo(1));
        as(otto).get("/admin/dlq").then().statusCode(200).body("depth", equalTo(0));
        as(otto).get("/admin/dlq?state=discarded")
                .then()
                .statusCode(200)
                .body("items[0].settleReason", equalTo("poison, reported upstream"));
        as(otto).get("/admin/audit").then().body("[0].action", equalTo("dlq.discard"));
    }

    // ------------------------------------------------------------------ helpers

    /** The ids of the dead letters the condition selects, as a JSON array of strings. */
    private String idsOf(String condition) {
        return text("SELECT coalesce(json_agg(id::text ORDER BY id), '[]')::text FROM dead_letter WHERE " + condition);
    }

    private UUID aliceAttempt(String key) {
        String job =
                createJob(alice, key, JOB_BODY).then().statusCode(201).extract().path("id");
        return UUID.fromString(as(alice).get("/jobs/" + job).path("attempts[0].id"));
    }

    private void storedDeadLetter(UUID attempt, String reason) {
        execute("INSERT INTO dead_letter (message_key, attempt_id, job_id, owner_id, provider, reason, death_count,"
                + " dead_lettered_at, source_queue, body) SELECT 'row-' || a.id || '-" + reason + "', a.id, a.job_id,"
                + " j.owner_id, a.provider, '" + reason + "', 1, now(), 'jobs.attempts.dead-letters',"
                + " convert_to('{}', 'UTF8') FROM attempt a JOIN job j ON j.id = a.job_id WHERE a.id = '" + attempt
                + "'");
    }

    private void storedPoison() {
        execute("INSERT INTO dead_letter (message_key, reason, death_count, dead_lettered_at, source_queue, body)"
                + " VALUES ('poison-" + UUID.randomUUID() + "', 'rejected', 1, now(), 'jobs.attempts.dead-letters',"
                + " convert_to('not json', 'UTF8'))");
    }

    /**
     * Has the broker dead-letter the message into jobs.attempts.dlx: rejected, or (overLimit) returned
     * past a quorum queue's delivery limit of 0, which the broker records as {@code delivery_limit}.
     */
    private void deadLetter(String body, String messageId, boolean overLimit) {
        broker.withChannel(channel -> {
            channel.queueDeclare(
                    SOURCE,
                    true,
                    false,
                    false,
                    Map.of(
                            "x-queue-type",
                            "quorum",
                            "x-delivery-limit",
                            0,
                            "x-dead-letter-exchange",
                            AttemptTopology.DEAD_LETTER_EXCHANGE));
            channel.confirmSelect();
            channel.basicPublish(
                    "",
                    SOURCE,
                    new AMQP.BasicProperties.Builder()
                            .messageId(messageId)
                            .contentType("application/json")
                            .deliveryMode(2)
                            .build(),
                    body.getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(5_000);
            GetResponse response = null;
            for (int i = 0; i < 100 && response == null; i++) {
                response = channel.basicGet(SOURCE, false);
            }
            assertThat(response).as("the message in " + SOURCE).isNotNull();
            if (overLimit) {
                channel.basicNack(response.getEnvelope().getDeliveryTag(), false, true);
            } else {
                channel.basicReject(response.getEnvelope().getDeliveryTag(), false);
            }
            return null;
        });
    }

    private void awaitOnWorkQueue(UUID attempt) {
        await().atMost(Duration.ofSeconds(10)).until(() -> TestBroker.drain(broker, AttemptTopology.QUEUE).stream()
                .anyMatch(body -> body.contains(attempt.toString())));
    }

    private boolean legacyQueueExists() {
        try {
            return broker.withChannel(channel -> {
                try {
                    channel.queueDeclarePassive(AttemptTopology.LEGACY_DEAD_LETTER_QUEUE);
                    return true;
                } catch (IOException notFound) {
                    return false;
                }
            });
        } catch (RuntimeException closedByTheNotFound) {
            return false;
        }
    }
}
