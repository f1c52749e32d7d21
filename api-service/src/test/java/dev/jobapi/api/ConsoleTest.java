package dev.jobapi.api;

import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/**
 * What the page and the operator console read besides the existing endpoints: GET /me names the
 * sections the server serves the caller and the providers a job may name, and GET /admin/spend
 * sums every owner's ledger per provider and day.
 */
@QuarkusTest
class ConsoleTest extends ApiTestSupport {

    @Test
    void meGivesOperatorsEveryConsoleSectionAndOthersNone() {
        as(Tokens.of("otto", "operator"))
                .get("/me")
                .then()
                .statusCode(200)
                .body("subject", equalTo("otto"))
                .body("roles", contains("operator"))
                .body(
                        "console",
                        contains(
                                "dead_letters", "quarantine", "kill_switch", "providers", "audit", "spend", "budgets"));
        as(Tokens.user("alice"))
                .get("/me")
                .then()
                .statusCode(200)
                .body("subject", equalTo("alice"))
                .body("console", empty());
        as(Tokens.reviewer("rita")).get("/me").then().statusCode(200).body("console", empty());
    }

    @Test
    void meNamesTheConfiguredProvidersTheDefaultFirstSoThePageOffersNoListOfItsOwn() {
        // %test: names fake-a, fake-b, fake-anthropic; default fake-a.
        as(Tokens.user("alice"))
                .get("/me")
                .then()
                .statusCode(200)
                .body("providers", contains("fake-a", "fake-b", "fake-anthropic"));
    }

    @Test
    void spendSumsEveryOwnersLedgerPerProviderAndDay() {
        aJobWithUsage("alice", "fake-a", 10, 20, "provider_reported");
        aJobWithUsage("bob", "fake-a", 100, 200, "provider_reported");
        aJobWithUsage("bob", "fake-a", null, null, "unknown");
        aJobWithUsage("carol", "fake-b", 5, 5, "provider_reported");

        as(Tokens.of("otto", "operator"))
                .get("/admin/spend")
                .then()
                .statusCode(200)
                .body("days.size()", equalTo(2))
                .body("days[0].provider", equalTo("fake-a"))
                .body("days[0].promptTokens", equalTo(110))
                .body("days[0].completionTokens", equalTo(220))
                .body("days[0].attempts", equalTo(3))
                .body("days[0].unknownAttempts", equalTo(1))
                .body("days[1].provider", equalTo("fake-b"))
                .body("days[1].promptTokens", equalTo(5));
        as(Tokens.user("alice")).get("/admin/spend").then().statusCode(403);
    }

    @Test
    void spendRefusesABadRangeWithAProblem() {
        as(Tokens.of("otto", "operator"))
                .get("/admin/spend?from=2026-02-01&to=2026-01-01")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-query"));
        as(Tokens.of("otto", "operator"))
                .get("/admin/spend?from=2020-01-01&to=2026-01-01")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-query"));
    }
}
