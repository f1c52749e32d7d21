package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The receivers' Standard Webhooks verification against signatures made here, apart from it, with the JDK's
 * HMAC; and a request over HTTP recorded with its endpoint, id, type, job and answer.
 */
class WebhookReceiverTest {

    private static final byte[] KEY = "a soak receiver's key, 32 bytes!".getBytes(StandardCharsets.US_ASCII);
    private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(KEY);
    private static final String ID = "msg_2b0f3c4d5e6f708192a3b4c5d6e7f801";
    private static final Instant NOW = Instant.ofEpochSecond(1_796_428_800L);
    private static final String TIMESTAMP = Long.toString(NOW.getEpochSecond());
    private static final byte[] BODY = ("{\"type\":\"job.completed\",\"timestamp\":\"2026-12-04T00:00:00Z\","
                    + "\"data\":{\"jobId\":\"5b0c1d2e-0000-4000-8000-000000000001\",\"attemptId\":null,"
                    + "\"eventId\":17,\"cursor\":\"901-17\",\"detail\":null}}")
            .getBytes(StandardCharsets.UTF_8);

    /** The signature as the specification defines it, computed here without the receiver's code. */
    private static String sign(byte[] key, String id, String timestamp, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        byte[] content = (id + "." + timestamp + "." + new String(body, StandardCharsets.UTF_8))
                .getBytes(StandardCharsets.UTF_8);
        return "v1," + Base64.getEncoder().encodeToString(mac.doFinal(content));
    }

    @Test
    void aSignatureOfTheSecretVerifies() throws Exception {
        String signature = sign(KEY, ID, TIMESTAMP, BODY);

        // The same vector from openssl: printf '%s' "$ID.$TIMESTAMP.$BODY" | openssl dgst -sha256 -hmac "$KEY"
        assertThat(signature).isEqualTo("v1,TkxisxY2vjT1rUUl6ncxDW97EBWQOeTutJLr2k91vmc=");
        assertThat(WebhookReceiver.problem(SECRET, ID, TIMESTAMP, BODY, signature, NOW))
                .isNull();
    }

    @Test
    void duringARotationAnyListedSignatureMayBeTheSecrets() throws Exception {
        byte[] other = "the endpoint's previous key, 32b".getBytes(StandardCharsets.US_ASCII);
        String both = sign(other, ID, TIMESTAMP, BODY) + " " + sign(KEY, ID, TIMESTAMP, BODY);

        assertThat(WebhookReceiver.signedBy(SECRET, ID, TIMESTAMP, BODY, both)).isTrue();
        assertThat(WebhookReceiver.signedBy(SECRET, ID, TIMESTAMP, BODY, sign(other, ID, TIMESTAMP, BODY)))
                .isFalse();
    }

    @Test
    void aChangedBodyIdOrTimestampOrAnotherSchemeDoesNotVerify() throws Exception {
        String signature = sign(KEY, ID, TIMESTAMP, BODY);
        byte[] changed = new String(BODY, StandardCharsets.UTF_8)
                .replace("completed", "cancelled")
                .getBytes(StandardCharsets.UTF_8);

        assertThat(WebhookReceiver.signedBy(SECRET, ID, TIMESTAMP, changed, signature))
                .isFalse();
        assertThat(WebhookReceiver.signedBy(SECRET, "msg_other", TIMESTAMP, BODY, signature))
                .isFalse();
        assertThat(WebhookReceiver.signedBy(SECRET, ID, Long.toString(NOW.getEpochSecond() + 1), BODY, signature))
                .isFalse();
        assertThat(WebhookReceiver.signedBy(SECRET, ID, TIMESTAMP, BODY, signature.replace("v1,", "v1a,")))
                .isFalse();
        assertThat(WebhookReceiver.signedBy(SECRET, ID, TIMESTAMP, BODY, "v1,not base64!"))
                .isFalse();
        assertThat(WebhookReceiver.problem(SECRET, ID, TIMESTAMP, changed, signature, NOW))
                .startsWith("no signature in");
    }

    @Test
    void aTimestampFarFromTheReceiversClockOrAMissingHeaderDoesNotVerify() throws Exception {
        String old = Long.toString(NOW.minusSeconds(301).getEpochSecond());

        assertThat(WebhookReceiver.problem(SECRET, ID, old, BODY, sign(KEY, ID, old, BODY), NOW))
                .isEqualTo("webhook-timestamp " + old + " is 301 s from the receiver's clock");
        assertThat(WebhookReceiver.problem(SECRET, ID, TIMESTAMP, BODY, null, NOW))
                .contains("missing");
    }

    @Test
    void aRequestIsRecordedWithItsEndpointIdTypeJobAndAnswer() throws Exception {
        try (WebhookReceiver receiver = new WebhookReceiver(42)) {
            receiver.add(new WebhookReceiver.Endpoint("e1", "alice", WebhookReceiver.PATH_PREFIX + "alice-1", SECRET));
            String timestamp = Long.toString(Instant.now().getEpochSecond());
            HttpResponse<Void> answer = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(receiver.url(WebhookReceiver.PATH_PREFIX + "alice-1")))
                                    .header("Content-Type", "application/json")
                                    .header("webhook-id", ID)
                                    .header("webhook-timestamp", timestamp)
                                    .header("webhook-signature", sign(KEY, ID, timestamp, BODY))
                                    .POST(HttpRequest.BodyPublishers.ofByteArray(BODY))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding());

            // The receiver records a request once its answer is written: the client may hear it first.
            await().atMost(Duration.ofSeconds(5)).until(() -> receiver.receivedCount() > 0);
            WebhookReceiver.Received received = receiver.log().received().get(0);
            assertThat(received.endpointId()).isEqualTo("e1");
            assertThat(received.webhookId()).isEqualTo(ID);
            assertThat(received.type()).isEqualTo("job.completed");
            assertThat(received.jobId()).isEqualTo("5b0c1d2e-0000-4000-8000-000000000001");
            assertThat(received.eventId()).isEqualTo(17L);
            assertThat(received.verified()).as(received.problem()).isTrue();
            assertThat(received.status()).isEqualTo(answer.statusCode()).isIn(204, 500);
        }
    }
}
