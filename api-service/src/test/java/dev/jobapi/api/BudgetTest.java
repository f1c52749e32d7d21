package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A per-owner daily token budget, from the ledger: no new attempt past it; replays still answer. */
@QuarkusTest
class BudgetTest extends ApiTestSupport {

    private final String thrifty = Tokens.user("thrifty"); // budget 100 tokens a day in the test profile

    @Test
    void noNewAttemptStartsOnceTodaysReportedSpendReachesTheBudget() {
        String id = createJob(thrifty, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) SELECT id, 'thrifty', 'fake-a', 60, 50, 'provider_reported', now() FROM attempt");
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400'");

        Response refused = createJob(thrifty, "k-2", JOB_BODY);
        refused.then()
                .statusCode(429)
                .contentType("application/problem+json")
                .body("code", equalTo("budget-exceeded"))
                .body("budgetTokens", equalTo(100))
                .body("spentTokensToday", equalTo(110))
                .body("unknownSpendAttemptsToday", equalTo(0))
                .body("retryable", equalTo(true));
        // The same request may start an attempt when the UTC day the budget counts is over.
        long untilMidnight = Duration.between(
                        Instant.now(), LocalDate.now(ZoneOffset.UTC).plusDays(1).atStartOfDay(ZoneOffset.UTC))
                .toSeconds();
        assertThat(Long.parseLong(refused.header("Retry-After"))).isBetween(untilMidnight - 5, untilMidnight + 5);
        // The page draws no button the API would refuse.
        as(thrifty).get("/jobs/" + id).then().statusCode(200).body("actions", equalTo(List.of("cancel")));
        requestAttempt(thrifty, id, "retry-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(429)
                .body("code", equalTo("budget-exceeded"));
        // A replay starts nothing, so it is never refused for the budget.
        createJob(thrifty, "k-1", JOB_BODY).then().statusCode(200).body("id", equalTo(id));
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(1);
        // Owners without a configured budget are not limited.
        createJob(Tokens.user("alice"), "k-3", JOB_BODY).then().statusCode(201);
    }

    @Test
    void aRowWhoseCountsAddUpPastAnIntIsSpendNotAServerError() {
        // Written before counts were bounded, or by hand: the budget check must still add them up.
        createJob(thrifty, "k-1", JOB_BODY).then().statusCode(201);
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) SELECT id, 'thrifty', 'fake-a', 2147483647, 2147483647, 'provider_reported', now()"
                + " FROM attempt");
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400'");

        createJob(thrifty, "k-2", JOB_BODY)
                .then()
                .statusCode(429)
                .body("code", equalTo("budget-exceeded"))
                .body("spentTokensToday", equalTo(2L * Integer.MAX_VALUE));
    }
}
