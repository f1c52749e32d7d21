package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;

import dev.jobapi.api.contract.OutsideTheContract;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 20, from the operators' and the owners' side: prices and budgets set and
 * read through the API, audited; a start whose owner's budget is full refused early with the
 * figures.
 */
@QuarkusTest
class SpendBudgetAdminTest extends ApiTestSupport {

    private final String otto = Tokens.of("otto", "operator");
    private final String alice = Tokens.user("alice");

    private Response put(String path, String body) {
        return as(otto).contentType("application/json").body(body).put(path);
    }

    @Test
    void anOperatorSetsPricesAsVersionsAndBudgetsThatOwnersRead() {
        put(
                        "/admin/prices/fake-a",
                        "{\"model\":\"fake-a\",\"inputUsdPerMillionTokens\":3,"
                                + "\"outputUsdPerMillionTokens\":15,\"reason\":\"list price\"}")
                .then()
                .statusCode(200)
                .body("provider", equalTo("fake-a"))
                .body("setBy", equalTo("otto"));
        put(
                        "/admin/prices/fake-a",
                        "{\"model\":\"fake-a\",\"inputUsdPerMillionTokens\":2.5,"
                                + "\"outputUsdPerMillionTokens\":10,\"reason\":\"new contract\"}")
                .then()
                .statusCode(200);
        as(otto).get("/admin/prices")
                .then()
                .statusCode(200)
                .body("$", hasSize(1))
                .body("[0].inputUsdPerMillionTokens", equalTo(2.5f))
                .body("[0].reason", equalTo("new contract"));
        // A change is a new version: the attempts claimed at the old price keep it.
        assertThat(count("SELECT count(*) FROM provider_price")).isEqualTo(2);

        put("/admin/budgets/alice/month", "{\"limitUsd\":250,\"reason\":\"team plan\"}")
                .then()
                .statusCode(200)
                .body("period", equalTo("month"))
                .body("limitUsd", equalTo(250.0f))
                .body("softPercent", equalTo(80))
                .body("remainingUsd", equalTo(250.0f))
                .body("defaultBudget", equalTo(false));
        as(otto).get("/admin/budgets/alice").then().statusCode(200).body("budgets", hasSize(1));
        as(alice).get("/me").then().statusCode(200).body("budgets[0].period", equalTo("month"));
        as(Tokens.user("bob")).get("/me").then().statusCode(200).body("budgets", hasSize(0));
        assertThat(count("SELECT count(*) FROM audit_record WHERE action IN ('price.set', 'budget.set')"))
                .isEqualTo(3);
    }

    @Test
    @OutsideTheContract("a weight below the declared minimum and a change without its reason, to see them refused")
    void anOperatorSetsAnOwnersShareAuditedAndBadValuesAreRefused() {
        as(otto).get("/admin/owners/alice/share")
                .then()
                .statusCode(200)
                .body("weight", equalTo(1))
                .body("maxInFlight", equalTo(null));
        put("/admin/owners/alice/share", "{\"weight\":3,\"maxInFlight\":2,\"reason\":\"a team of three\"}")
                .then()
                .statusCode(200)
                .body("weight", equalTo(3))
                .body("maxInFlight", equalTo(2))
                .body("setBy", equalTo("otto"));
        as(otto).get("/admin/owners/alice/share").then().statusCode(200).body("reason", equalTo("a team of three"));
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'owner-share.set'"))
                .isEqualTo(1);
        put("/admin/owners/alice/share", "{\"weight\":0,\"reason\":\"none\"}")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
        put("/admin/owners/alice/share", "{\"weight\":2}").then().statusCode(400);
        as(alice).get("/admin/owners/alice/share").then().statusCode(403);
    }

    @Test
    void anOperatorSetsReadsAndRemovesABudgetOfOneProviderAudited() {
        put("/admin/budgets/alice/day?provider=fake-a", "{\"limitUsd\":5,\"reason\":\"fake-a is dear\"}")
                .then()
                .statusCode(200)
                .body("period", equalTo("day"))
                .body("provider", equalTo("fake-a"))
                .body("limitUsd", equalTo(5.0f))
                .body("defaultBudget", equalTo(false));
        put("/admin/budgets/alice/day", "{\"limitUsd\":20,\"reason\":\"trial\"}")
                .then()
                .statusCode(200)
                .body("provider", nullValue());
        as(otto).get("/admin/budgets/alice")
                .then()
                .statusCode(200)
                .body("budgets.provider", contains(null, "fake-a"))
                .body("budgets.limitUsd", contains(20.0f, 5.0f));
        as(alice).get("/me").then().statusCode(200).body("budgets.provider", contains(null, "fake-a"));
        put("/admin/budgets/alice/day?provider=nope", "{\"limitUsd\":5,\"reason\":\"x\"}")
                .then()
                .statusCode(404)
                .body("code", equalTo("not-found"))
                .body("detail", containsString("Provider 'nope' is not configured"));

        as(otto).delete("/admin/budgets/alice/day?provider=fake-a&reason=contract ended")
                .then()
                .statusCode(204);
        as(otto).get("/admin/budgets/alice").then().statusCode(200).body("budgets.provider", contains((String) null));
        as(otto).delete("/admin/budgets/alice/day?provider=fake-a&reason=again")
                .then()
                .statusCode(404)
                .body("code", equalTo("not-found"));
        as(alice).delete("/admin/budgets/alice/day?reason=mine").then().statusCode(403);
        assertThat(text("SELECT string_agg(action || ': ' || details, '; ' ORDER BY id) FROM audit_record"))
                .isEqualTo("budget.set: owner alice, day for provider fake-a 5 USD, soft 80%;"
                        + " budget.set: owner alice, day 20 USD, soft 80%;"
                        + " budget.remove: owner alice, day for provider fake-a");
    }

    /**
     * A budget of one provider refuses early only the starts at that provider, with the figures naming
     * it: a job at fake-b starts, and the page still offers its owner another attempt.
     */
    @Test
    void aStartWhoseProvidersBudgetIsFullIsRefusedWithTheFiguresAndAnotherProviderStarts() {
        put("/admin/budgets/alice/day?provider=fake-a", "{\"limitUsd\":10,\"reason\":\"trial\"}")
                .then()
                .statusCode(200);
        execute("INSERT INTO spend_window (owner_id, period, starts_on, provider, spent_usd, reserved_usd)"
                + " VALUES ('alice', 'day', (now() AT TIME ZONE 'UTC')::date, 'fake-a', 7, 3)");

        createJob(alice, "k-full", JOB_BODY)
                .then()
                .statusCode(429)
                .body("code", equalTo("spend-budget-exceeded"))
                .body("period", equalTo("day"))
                .body("provider", equalTo("fake-a"))
                .body("limitUsd", equalTo(10.0f))
                .body("detail", containsString("day budget for provider fake-a"));
        String atB = createJob(alice, "k-b", JOB_BODY.replace("fake-a", "fake-b"))
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400'");
        as(alice).get("/jobs/" + atB).then().statusCode(200).body("actions", hasItem("request_attempt"));
        requestAttempt(alice, atB, "retry-a", "{\"provider\":\"fake-a\"}")
                .then()
                .statusCode(429)
                .body("code", equalTo("spend-budget-exceeded"))
                .body("provider", equalTo("fake-a"));
        requestAttempt(alice, atB, "retry-b", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(201);
        assertThat(count("SELECT count(*) FROM attempt WHERE provider = 'fake-a'"))
                .isZero();
    }

    @Test
    void aStartWhoseOwnersBudgetIsFullIsRefusedWithTheFigures() {
        put("/admin/budgets/alice/day", "{\"limitUsd\":10,\"softPercent\":50,\"reason\":\"trial\"}")
                .then()
                .statusCode(200);
        execute("INSERT INTO spend_window (owner_id, period, starts_on, spent_usd, reserved_usd)"
                + " VALUES ('alice', 'day', (now() AT TIME ZONE 'UTC')::date, 7, 3)");

        Response refused = createJob(alice, "k-full", JOB_BODY);
        refused.then()
                .statusCode(429)
                .contentType("application/problem+json")
                .body("code", equalTo("spend-budget-exceeded"))
                .body("period", equalTo("day"))
                .body("provider", nullValue())
                .body("limitUsd", equalTo(10.0f))
                .body("spentUsd", equalTo(7.0f))
                .body("reservedUsd", equalTo(3.0f))
                .body("retryable", equalTo(true));
        long untilMidnight = Duration.between(
                        Instant.now(), LocalDate.now(ZoneOffset.UTC).plusDays(1).atStartOfDay(ZoneOffset.UTC))
                .toSeconds();
        assertThat(Long.parseLong(refused.header("Retry-After"))).isBetween(untilMidnight - 5, untilMidnight + 5);
        assertThat(count("SELECT count(*) FROM job")).isZero();
        // Room again (a call under way settled lower): the same request starts the job.
        execute("UPDATE spend_window SET reserved_usd = 1");
        createJob(alice, "k-full", JOB_BODY).then().statusCode(201);
    }

    @Test
    @OutsideTheContract("sends what the contract refuses: a negative limit, a period that does not exist")
    void aBudgetOrPriceOutsideItsBoundsIsAProblemNeverAServerError() {
        put("/admin/budgets/alice/day", "{\"limitUsd\":-1,\"reason\":\"x\"}")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
        put("/admin/budgets/alice/day", "{\"limitUsd\":1.0000001,\"reason\":\"x\"}")
                .then()
                .statusCode(400);
        put("/admin/budgets/alice/day", "{\"limitUsd\":1,\"softPercent\":0,\"reason\":\"x\"}")
                .then()
                .statusCode(400);
        put("/admin/budgets/alice/day", "{\"limitUsd\":1}").then().statusCode(400);
        put("/admin/budgets/alice/week", "{\"limitUsd\":1,\"reason\":\"x\"}")
                .then()
                .statusCode(404)
                .body("code", equalTo("not-found"));
        as(otto).delete("/admin/budgets/alice/day").then().statusCode(400).body("code", equalTo("invalid-request"));
        as(otto).delete("/admin/budgets/alice/week?reason=x").then().statusCode(404);
        put(
                        "/admin/prices/nope",
                        "{\"model\":\"m\",\"inputUsdPerMillionTokens\":1,"
                                + "\"outputUsdPerMillionTokens\":1,\"reason\":\"x\"}")
                .then()
                .statusCode(404);
        put(
                        "/admin/prices/fake-a",
                        "{\"inputUsdPerMillionTokens\":1,\"outputUsdPerMillionTokens\":1," + "\"reason\":\"x\"}")
                .then()
                .statusCode(400);
        as(alice)
                .contentType("application/json")
                .body("{\"limitUsd\":1000000,\"reason\":\"more\"}")
                .put("/admin/budgets/alice/day")
                .then()
                .statusCode(403);
        assertThat(count("SELECT count(*) FROM spend_budget")).isZero();
        assertThat(count("SELECT count(*) FROM provider_price")).isZero();
    }
}
