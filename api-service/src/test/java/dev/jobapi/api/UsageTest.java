package dev.jobapi.api;

import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/** GET /usage sums the ledger per provider and day; unknown spend is counted apart, never guessed. */
@QuarkusTest
class UsageTest extends ApiTestSupport {

    @Test
    void sumsTheCallersLedgerByProviderAndDay() {
        aJobWithUsage("alice", "fake-a", 10, 20, "provider_reported");
        aJobWithUsage("alice", "fake-a", 1, 2, "provider_reported");
        aJobWithUsage("alice", "fake-a", null, null, "unknown");
        aJobWithUsage("alice", "fake-b", 5, 5, "provider_reported");
        aJobWithUsage("bob", "fake-a", 100, 100, "provider_reported");
        as(Tokens.user("alice"))
                .get("/usage")
                .then()
                .statusCode(200)
                .body("owner", equalTo("alice"))
                .body("days.size()", equalTo(2))
                .body("days[0].provider", equalTo("fake-a"))
                .body("days[0].promptTokens", equalTo(11))
                .body("days[0].completionTokens", equalTo(22))
                .body("days[0].attempts", equalTo(3))
                .body("days[0].unknownAttempts", equalTo(1))
                .body("days[1].provider", equalTo("fake-b"));
    }

    @Test
    void onlyOperatorsReadAnotherOwnersUsage() {
        aJobWithUsage("bob", "fake-a", 100, 100, "provider_reported");
        as(Tokens.user("alice")).get("/usage?owner=bob").then().statusCode(403);
        as(Tokens.of("otto", "operator"))
                .get("/usage?owner=bob")
                .then()
                .statusCode(200)
                .body("days[0].promptTokens", equalTo(100));
        as(Tokens.user("alice")).get("/usage?from=yesterday").then().statusCode(400);
    }
}
