package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Webhooks under production's destination policy: an endpoint on a loopback, private, link-local or
 * unique-local address, or on plain http, is refused at registration; and an endpoint that resolves
 * to one when a delivery is due (a name that moved, a row written before the policy) is not sent to.
 */
@QuarkusTest
@TestProfile(WebhookDestinationPolicyTest.ProductionPolicy.class)
class WebhookDestinationPolicyTest extends ApiTestSupport {

    /** The defaults: public https destinations only. */
    public static class ProductionPolicy implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "jobapi.webhooks.allow-private-destinations", "false",
                    "jobapi.webhooks.require-https", "true");
        }
    }

    @Test
    void endpointsOnNonPublicAddressesOrPlainHttpAreRefused() {
        String owner = "policy-" + UUID.randomUUID();
        for (String url : new String[] {
            "https://127.0.0.1/hooks",
            "https://localhost:8443/hooks",
            "https://10.1.2.3/hooks",
            "https://172.16.0.9/hooks",
            "https://192.168.1.1/hooks",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/hooks",
            "https://0.0.0.0/hooks",
            "https://[::1]/hooks",
            "https://[fd00::1]/hooks",
            "https://[fe80::1]/hooks",
            "https://[::ffff:10.0.0.1]/hooks",
            "http://93.184.216.34/hooks"
        }) {
            as(Tokens.user(owner))
                    .contentType(ContentType.JSON)
                    .body(Map.of("url", url))
                    .post("/webhooks")
                    .then()
                    .statusCode(422)
                    .body("code", equalTo("webhook-destination-refused"));
        }
        assertThat(count("SELECT count(*) FROM webhook_endpoint WHERE owner_id = '" + owner + "'"))
                .isZero();
    }

    @Test
    void aDueDeliveryToANonPublicAddressIsNotSent() {
        String owner = "policy-" + UUID.randomUUID();
        execute("INSERT INTO webhook_endpoint (id, owner_id, url, event_types, secret, created_at) VALUES"
                + " (gen_random_uuid(), '" + owner + "', 'https://127.0.0.1:1/hooks', '{job.cancelled}',"
                + " 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdA==', now())");
        String job = createJob(Tokens.user(owner), "policy-" + UUID.randomUUID(), JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        as(Tokens.user(owner)).post("/jobs/" + job + "/cancel").then().statusCode(200);

        await().atMost(Duration.ofSeconds(15))
                .until(() ->
                        count("SELECT count(*) FROM webhook_delivery WHERE job_id = '" + job + "' AND attempts > 0")
                                == 1);
        String endpoint = text("SELECT id::text FROM webhook_endpoint WHERE owner_id = '" + owner + "'");
        as(Tokens.user(owner))
                .get("/webhooks/" + endpoint + "/deliveries")
                .then()
                .statusCode(200)
                .body("deliveries[0].state", equalTo("pending"))
                .body("deliveries[0].lastError", containsString("resolves to 127.0.0.1, not a public address"))
                .body("deliveries[0].lastStatus", equalTo(null));
    }
}
