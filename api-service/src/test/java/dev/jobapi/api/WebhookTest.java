package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.contract.OutsideTheContract;
import dev.jobapi.api.webhook.StandardWebhooksVerifier;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Webhooks (docs/design.md "Push: webhooks"): a delivery is written in its event's transaction, for
 * the kinds its endpoint wants; it is signed as Standard Webhooks specifies (checked by a verifier
 * written from the specification, not ours), keeps its webhook-id across retries, signs with both
 * secrets during a rotation's overlap, and ends failed and visible after the give-up time. The test
 * profile allows receivers on 127.0.0.1 over http; WebhookDestinationPolicyTest runs without that.
 */
@QuarkusTest
class WebhookTest extends ApiTestSupport {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    AgroalDataSource pool;

    private WebhookReceiver receiver;

    @BeforeEach
    void startReceiver() throws Exception {
        receiver = new WebhookReceiver();
    }

    @AfterEach
    void stopReceiver() {
        receiver.close();
    }

    @Test
    void aReceiverThatFailsThreeTriesGetsTheFourthWithTheSameWebhookIdAndAVerifiableSignature() throws Exception {
        String owner = newOwner();
        JsonPath endpoint = register(owner, receiver.url("/hooks"), List.of("job.cancelled"));
        receiver.answerFirst(500, 503, 500);
        String job = newJob(owner);

        cancel(owner, job);

        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.received().size() >= 4);
        List<WebhookReceiver.Received> tries = receiver.received();
        assertThat(tries).extracting(WebhookReceiver.Received::answered).containsExactly(500, 503, 500, 204);
        String webhookId = tries.get(0).header("webhook-id");
        assertThat(webhookId).matches("msg_[0-9a-f]{32}");
        StandardWebhooksVerifier verifier = new StandardWebhooksVerifier(endpoint.getString("secret"));
        for (WebhookReceiver.Received attempt : tries) {
            assertThat(attempt.header("webhook-id")).isEqualTo(webhookId);
            verifier.verify(
                    attempt.header("webhook-id"),
                    attempt.header("webhook-timestamp"),
                    attempt.header("webhook-signature"),
                    attempt.body());
            assertThat(attempt.body()).isEqualTo(tries.get(0).body());
        }
        JsonNode payload = JSON.readTree(tries.get(3).body());
        assertThat(payload.path("type").asText()).isEqualTo("job.cancelled");
        assertThat(payload.path("data").path("jobId").asText()).isEqualTo(job);
        assertThat(payload.path("data").path("cursor").asText()).matches("[0-9]+-[0-9]+");

        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        deliveries(owner, endpoint.getString("id"), "delivered").size() == 1);
        Map<String, Object> delivered =
                deliveries(owner, endpoint.getString("id"), "delivered").get(0);
        assertThat(delivered).containsEntry("webhookId", webhookId).containsEntry("attempts", 4);
        assertThat(delivered).containsEntry("lastStatus", 204).containsEntry("type", "job.cancelled");
    }

    @Test
    void aDeliveryIsWrittenOnlyWhenItsEventCommitsAndOnlyForTheKindsItsEndpointWants() throws Exception {
        String owner = newOwner();
        register(owner, receiver.url("/hooks"), List.of("job.cancelled"));
        String job = newJob(owner); // job.created and attempt.requested: not wanted

        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            insertEvent(connection, job, "job.cancelled");
            connection.rollback();
            assertThat(deliveriesOfJob(job)).isZero();

            insertEvent(connection, job, "job.replayed");
            insertEvent(connection, job, "job.cancelled");
            connection.commit();
        }
        assertThat(deliveriesOfJob(job)).isEqualTo(1);
        assertThat(text("SELECT type FROM webhook_delivery WHERE job_id = '" + job + "'"))
                .isEqualTo("job.cancelled");
    }

    @Test
    void duringARotationsOverlapEachDeliveryIsSignedWithBothSecrets() throws Exception {
        String owner = newOwner();
        JsonPath endpoint = register(owner, receiver.url("/hooks"), List.of("job.cancelled"));
        String oldSecret = endpoint.getString("secret");
        JsonPath rotated = as(Tokens.user(owner))
                .post("/webhooks/" + endpoint.getString("id") + "/rotate-secret")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        String newSecret = rotated.getString("secret");
        assertThat(newSecret).startsWith("whsec_").isNotEqualTo(oldSecret);
        assertThat(rotated.getString("previousSecretExpiresAt")).isNotNull();

        cancel(owner, newJob(owner));

        await().atMost(Duration.ofSeconds(15)).until(() -> !receiver.received().isEmpty());
        WebhookReceiver.Received delivery = receiver.received().get(0);
        String[] signed = {
            delivery.header("webhook-id"), delivery.header("webhook-timestamp"), delivery.header("webhook-signature")
        };
        assertThat(signed[2].split(" ")).hasSize(2);
        assertThat(new StandardWebhooksVerifier(oldSecret)
                        .matchingSignatures(signed[0], signed[1], signed[2], delivery.body()))
                .isEqualTo(1);
        assertThat(new StandardWebhooksVerifier(newSecret)
                        .matchingSignatures(signed[0], signed[1], signed[2], delivery.body()))
                .isEqualTo(1);
        // The registration's answer was the only other place the secret showed.
        as(Tokens.user(owner))
                .get("/webhooks/" + endpoint.getString("id"))
                .then()
                .statusCode(200)
                .body("$", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasKey("secret")));
    }

    @Test
    void aDeliveryPastItsGiveUpTimeFailsVisiblyAndItsOwnerCanSendItAgainWithTheSameId() {
        String owner = newOwner();
        JsonPath endpoint = register(owner, receiver.url("/hooks"), List.of("job.cancelled"));
        String id = endpoint.getString("id");
        receiver.answerAlways(500);
        cancel(owner, newJob(owner));
        await().atMost(Duration.ofSeconds(15)).until(() -> !receiver.received().isEmpty());

        // As if it had been retried for the whole give-up time (72 h by default).
        execute("UPDATE webhook_delivery SET retry_from = now() - interval '100 hours' WHERE endpoint_id = '" + id
                + "'");

        await().atMost(Duration.ofSeconds(15))
                .until(() -> deliveries(owner, id, "failed").size() == 1);
        Map<String, Object> failed = deliveries(owner, id, "failed").get(0);
        assertThat(failed).containsEntry("lastStatus", 500).containsEntry("nextAttemptAt", null);
        String webhookId = (String) failed.get("webhookId");

        receiver.answerAlways(204);
        as(Tokens.user(owner))
                .post("/webhooks/" + id + "/deliveries/" + webhookId + "/retry")
                .then()
                .statusCode(200)
                .body("state", equalTo("pending"));
        await().atMost(Duration.ofSeconds(15))
                .until(() -> deliveries(owner, id, "delivered").size() == 1);
        List<WebhookReceiver.Received> all = receiver.received();
        assertThat(all.get(all.size() - 1).header("webhook-id")).isEqualTo(webhookId);
        as(Tokens.user(owner))
                .post("/webhooks/" + id + "/deliveries/" + webhookId + "/retry")
                .then()
                .statusCode(409)
                .body("code", equalTo("webhook-delivery-not-failed"));
    }

    @Test
    void aTestDeliveryArrivesAndAnEndpointThatAnswersGoneIsDisabled() throws Exception {
        String owner = newOwner();
        String id = register(owner, receiver.url("/hooks"), null).getString("id");
        receiver.answerFirst(204).answerAlways(410);

        as(Tokens.user(owner)).post("/webhooks/" + id + "/test").then().statusCode(202);
        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.received().size() == 1);
        JsonNode test = JSON.readTree(receiver.received().get(0).body());
        assertThat(test.path("type").asText()).isEqualTo("webhook.test");
        assertThat(test.path("data").path("endpointId").asText()).isEqualTo(id);

        as(Tokens.user(owner)).post("/webhooks/" + id + "/test").then().statusCode(202);
        await().atMost(Duration.ofSeconds(15))
                .until(() -> as(Tokens.user(owner)).get("/webhooks/" + id).path("disabledReason") != null);
        as(Tokens.user(owner))
                .post("/webhooks/" + id + "/test")
                .then()
                .statusCode(409)
                .body("code", equalTo("webhook-disabled"));
        // A disabled endpoint gets nothing more: its job's end is not even queued.
        cancel(owner, newJob(owner));
        assertThat(count("SELECT count(*) FROM webhook_delivery WHERE endpoint_id = '" + id
                        + "' AND job_id IS NOT NULL"))
                .isZero();
    }

    @Test
    void aRegistrationIsCheckedKeptToItsOwnerAndNotDoubled() {
        String owner = newOwner();
        String url = receiver.url("/hooks");
        JsonPath endpoint = register(owner, url, null);
        assertThat(endpoint.getList("events")).containsExactly("job.completed", "job.cancelled", "job.needs_review");
        String id = endpoint.getString("id");

        postEndpoint(owner, Map.of("url", url))
                .then()
                .statusCode(409)
                .body("code", equalTo("webhook-exists"))
                .body("detail", org.hamcrest.Matchers.containsString(id));
        postEndpoint(owner, Map.of("url", "ftp://example.com/hooks"))
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
        postEndpoint(owner, Map.of("url", url + "2", "events", List.of("job.exploded")))
                .then()
                .statusCode(400)
                .body("detail", startsWith("events: unknown event kind 'job.exploded'"));

        as(Tokens.user("someone-else")).get("/webhooks/" + id).then().statusCode(404);
        as(Tokens.user("someone-else"))
                .get("/webhooks")
                .then()
                .statusCode(200)
                .body("id", org.hamcrest.Matchers.not(org.hamcrest.Matchers.hasItem(id)));
        as(Tokens.user("someone-else")).delete("/webhooks/" + id).then().statusCode(404);

        as(Tokens.user(owner)).delete("/webhooks/" + id).then().statusCode(204);
        as(Tokens.user(owner)).get("/webhooks/" + id).then().statusCode(404);
        register(owner, url, null); // the url is free again
    }

    @Test
    @OutsideTheContract("fields the document does not declare, to see them refused")
    void aRegistrationWithAnUnknownFieldIsRefused() {
        postEndpoint(newOwner(), Map.of("url", receiver.url("/x"), "secret", "mine"))
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
    }

    private static String newOwner() {
        return "hooks-" + UUID.randomUUID();
    }

    private static io.restassured.response.Response postEndpoint(String owner, Map<String, Object> body) {
        return as(Tokens.user(owner)).contentType(ContentType.JSON).body(body).post("/webhooks");
    }

    private static JsonPath register(String owner, String url, List<String> events) {
        Map<String, Object> body = events == null ? Map.of("url", url) : Map.of("url", url, "events", events);
        return postEndpoint(owner, body)
                .then()
                .statusCode(201)
                .header("Location", startsWith("/webhooks/"))
                .extract()
                .jsonPath();
    }

    private static List<Map<String, Object>> deliveries(String owner, String endpoint, String state) {
        return as(Tokens.user(owner))
                .queryParam("state", state)
                .get("/webhooks/" + endpoint + "/deliveries")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getList("deliveries");
    }

    private long deliveriesOfJob(String job) {
        return count("SELECT count(*) FROM webhook_delivery WHERE job_id = '" + job + "'");
    }

    private static void insertEvent(Connection connection, String job, String kind) throws Exception {
        try (PreparedStatement insert =
                connection.prepareStatement("INSERT INTO job_event (job_id, at, kind) VALUES (?::uuid, now(), ?)")) {
            insert.setString(1, job);
            insert.setString(2, kind);
            insert.executeUpdate();
        }
    }

    private static void cancel(String owner, String job) {
        as(Tokens.user(owner)).post("/jobs/" + job + "/cancel").then().statusCode(200);
    }

    private static String newJob(String owner) {
        return createJob(Tokens.user(owner), "hooks-" + UUID.randomUUID(), JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
    }
}
