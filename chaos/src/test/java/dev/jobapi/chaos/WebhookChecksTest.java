package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.chaos.WebhookChecks.EndedJob;
import dev.jobapi.chaos.WebhookChecks.Key;
import dev.jobapi.chaos.WebhookReceiver.Endpoint;
import dev.jobapi.chaos.WebhookReceiver.Received;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The webhook invariants over hand-made receiver logs: alice has two endpoints, dave one, bob none. A log where
 * every end arrived passes, with its retries and redeliveries counted; a missing end, an end under two
 * webhook-ids and an unverified request are each reported under their invariant.
 */
class WebhookChecksTest {

    private static final Endpoint ALICE_1 = new Endpoint("e1", "alice", "/chaos-webhooks/alice-1", "whsec_a");
    private static final Endpoint ALICE_2 = new Endpoint("e2", "alice", "/chaos-webhooks/alice-2", "whsec_b");
    private static final Endpoint DAVE_1 = new Endpoint("e3", "dave", "/chaos-webhooks/dave-1", "whsec_c");
    private static final List<Endpoint> ENDPOINTS = List.of(ALICE_1, ALICE_2, DAVE_1);

    private final List<EndedJob> ended = List.of(
            new EndedJob("j1", "alice", "completed"),
            new EndedJob("j2", "alice", "cancelled"),
            new EndedJob("j3", "dave", "completed"),
            new EndedJob("j4", "bob", "completed"));

    private final List<Received> received = new ArrayList<>();

    private void request(Endpoint endpoint, String webhookId, String type, String job, int status) {
        received.add(new Received(endpoint.id(), webhookId, type, job, 1L, null, status, 0, "2026-12-04T00:00:00Z"));
    }

    /** Every end at each of its owner's endpoints, once answered 2xx. */
    private void everyEndDelivered() {
        request(ALICE_1, "msg_1", "job.completed", "j1", 204);
        request(ALICE_2, "msg_2", "job.completed", "j1", 204);
        request(ALICE_1, "msg_3", "job.cancelled", "j2", 204);
        request(ALICE_2, "msg_4", "job.cancelled", "j2", 204);
        request(DAVE_1, "msg_5", "job.completed", "j3", 204);
    }

    private WebhookChecks.Found check() {
        return WebhookChecks.check(ENDPOINTS, received, ended, Map.of());
    }

    @Test
    void everyEndDeliveredPassesAndRetriesAndRedeliveriesAreOnlyCounted() {
        // A 500 and a retry under the same id; then the same id again after its 2xx (at-least-once).
        request(DAVE_1, "msg_5", "job.completed", "j3", 500);
        everyEndDelivered();
        request(ALICE_1, "msg_1", "job.completed", "j1", 204);

        WebhookChecks.Found found = check();

        assertThat(found.lost()).isEmpty();
        assertThat(found.twice()).isEmpty();
        assertThat(found.invalid()).isEmpty();
        assertThat(found.figures())
                .containsEntry("webhook endpoints (per owner)", Map.of("alice", 2, "dave", 1))
                .containsEntry("webhook requests received", 7L)
                .containsEntry("distinct webhook-ids received", 5L)
                .containsEntry("webhook requests repeating a webhook-id (retries after a 500, timeout or fault)", 2L)
                .containsEntry("of them redeliveries of a webhook-id already answered 2xx (at-least-once)", 1L)
                .containsEntry("webhook requests answered 500 by the receivers", 1L)
                .containsEntry("ended jobs of owners with webhook endpoints (completed or cancelled)", 3L)
                .containsEntry("job ends answered 2xx that are no end of the endpoint owner's jobs (should be 0)", 0L);
    }

    @Test
    void anEndNeverAnswered2xxAtOneOfTheOwnersEndpointsIsLost() {
        everyEndDelivered();
        received.removeIf(r -> r.webhookId().equals("msg_2"));
        // Only failed answers for dave's end: received, never delivered.
        received.removeIf(r -> r.webhookId().equals("msg_5"));
        request(DAVE_1, "msg_5", "job.completed", "j3", 500);
        request(DAVE_1, "msg_5", "job.completed", "j3", -1);

        WebhookChecks.Found found = WebhookChecks.check(
                ENDPOINTS,
                received,
                ended,
                Map.of(new Key("e3", "j3", "job.completed"), "msg_5 pending after 2 tries, last answered 500"));

        assertThat(found.lost())
                .containsExactly(
                        "job j1 (alice, completed): job.completed never answered 2xx at endpoint e2"
                                + " (/chaos-webhooks/alice-2); webhook_delivery: no row",
                        "job j3 (dave, completed): job.completed never answered 2xx at endpoint e3"
                                + " (/chaos-webhooks/dave-1); webhook_delivery: msg_5 pending after 2 tries, last"
                                + " answered 500");
        assertThat(found.twice()).isEmpty();
    }

    @Test
    void theWrongEndForAJobIsNoDeliveryOfItsEnd() {
        everyEndDelivered();
        received.removeIf(r -> r.webhookId().equals("msg_3"));
        request(ALICE_1, "msg_3", "job.completed", "j2", 204);

        WebhookChecks.Found found = check();

        assertThat(found.lost())
                .containsExactly("job j2 (alice, cancelled): job.cancelled never answered 2xx at endpoint e1"
                        + " (/chaos-webhooks/alice-1); webhook_delivery: no row");
        assertThat(found.figures())
                .containsEntry("job ends answered 2xx that are no end of the endpoint owner's jobs (should be 0)", 1L);
    }

    @Test
    void oneEndAnswered2xxUnderTwoWebhookIdsIsTwiceNotARedelivery() {
        everyEndDelivered();
        request(ALICE_2, "msg_9", "job.completed", "j1", 204);

        WebhookChecks.Found found = check();

        assertThat(found.twice())
                .containsExactly("job j1: job.completed answered 2xx at endpoint e2 (/chaos-webhooks/alice-2) under"
                        + " 2 webhook-ids [msg_2, msg_9]");
        assertThat(found.lost()).isEmpty();
        assertThat(found.figures())
                .containsEntry("of them redeliveries of a webhook-id already answered 2xx (at-least-once)", 0L);
    }

    @Test
    void anUnverifiedRequestIsReportedWithWhy() {
        everyEndDelivered();
        received.add(new Received(
                "e3", "msg_5", "job.completed", "j3", 1L, "no signature in \"v1,x\" is the secret's", 204, 0, "t"));
        received.add(
                new Received(null, "msg_7", "job.completed", "j9", 2L, "no endpoint is registered at /x", 204, 0, "t"));

        assertThat(check().invalid())
                .containsExactly(
                        "request msg_5 (job.completed of job j3) at endpoint e3 (/chaos-webhooks/dave-1), t:"
                                + " no signature in \"v1,x\" is the secret's",
                        "request msg_7 (job.completed of job j9) at no endpoint, t: no endpoint is registered at /x");
    }
}
