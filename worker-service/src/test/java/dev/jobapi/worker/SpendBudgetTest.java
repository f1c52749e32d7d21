package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.fakeprovider.ReceivedRequest;
import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 20: a money budget is reserved at the claim, before the send, and settled to
 * the reported cost; over the real database, broker and fake provider.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class SpendBudgetTest extends WorkerTestSupport {

    /** fake-a's max-tokens (the default): at 1 USD per output token, the most one call can cost. */
    private static final BigDecimal MOST_PER_CALL = new BigDecimal("4096");

    /** Output at 1 USD a token, input free: each call reserves exactly {@link #MOST_PER_CALL}. */
    private void aPriceForFakeA(String inputPerMillion, String outputPerMillion) {
        execute("INSERT INTO provider_price (provider, model, input_usd_per_mtok, output_usd_per_mtok,"
                + " effective_from, set_by, reason) VALUES ('fake-a', 'fake-a', " + inputPerMillion + ", "
                + outputPerMillion + ", now() - interval '1 minute', 'otto', 'test')");
    }

    private void aDailyBudgetForAlice(BigDecimal usd) {
        execute("INSERT INTO spend_budget (owner_id, period, limit_usd, soft_percent, set_by, set_at, reason)"
                + " VALUES ('alice', 'day', " + usd.toPlainString() + ", 80, 'otto', now(), 'test')");
    }

    /**
     * The budget race of issue 32: 200 queued jobs of an owner whose budget holds 10 calls, taken up by
     * 16 deliveries at once. Each claim reserves the most its call can cost by a conditional update
     * of the owner's window, so 10 calls go out and 190 attempts fail without a request. The 10 answer
     * after 6 s, past the read timeout (2 s here): unknown, they keep their reservations until the
     * sweep finds their answers at the provider and settles them, by then every other claim was
     * refused; what settles never passes the budget.
     */
    @Test
    void twoHundredQueuedJobsOfAnOwnerWhoseBudgetHoldsTenCallsMakeTenCalls() {
        aPriceForFakeA("0", "1000000");
        BigDecimal budget = MOST_PER_CALL.multiply(BigDecimal.TEN);
        aDailyBudgetForAlice(budget);
        fake().addScript(Script.of("budgeted", Step.delayed(6_000)));
        List<UUID[]> queued = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            UUID job = aJob("budgeted " + i);
            queued.add(new UUID[] {job, aStartingAttempt(job, "fake-a")});
        }
        queued.forEach(q -> publish(q[1], q[0]));

        // The test stands in for the API's outbox relay: should the ten unknown calls open fake-a's
        // breaker, what it held is announced again through the outbox.
        await().atMost(Duration.ofSeconds(90)).until(() -> {
            relayOutbox();
            return count("SELECT count(*) FROM attempt WHERE state = 'starting'") == 0;
        });
        assertThat(requestsMatching("budgeted")).hasSize(10);
        await().atMost(Duration.ofSeconds(60))
                .until(() -> count("SELECT count(*) FROM attempt WHERE state = 'succeeded'") == 10);
        assertThat(requestsMatching("budgeted")).hasSize(10);
        assertThat(count("SELECT count(*) FROM attempt WHERE state = 'failed' AND reason LIKE"
                        + " '%day budget of 40960.000000 USD%no request sent'"))
                .isEqualTo(190);
        BigDecimal settled = new BigDecimal(text("SELECT sum(cost_usd) FROM attempt"));
        assertThat(settled).isPositive().isLessThanOrEqualTo(budget);
        assertThat(new BigDecimal(text("SELECT spent_usd FROM spend_window WHERE owner_id = 'alice'")))
                .isEqualByComparingTo(settled);
        assertThat(new BigDecimal(text("SELECT reserved_usd FROM spend_window WHERE owner_id = 'alice'")))
                .isZero();
    }

    /**
     * The cost is the reported usage at the price in force at the claim, recorded on the attempt and
     * added to the owner's spend; a failure with nothing reported gives its reservation back.
     */
    @Test
    void aCallSettlesToItsReportedCostAndAFailedOneGivesItsReservationBack() {
        aPriceForFakeA("2000000", "1000000");
        aDailyBudgetForAlice(new BigDecimal("1000000"));
        fake().addScript(Script.of("refused by the provider", Step.failing(400)));
        UUID paid = aJob("settled at its cost");
        UUID paidAttempt = aStartingAttempt(paid, "fake-a");
        UUID refused = aJob("refused by the provider");
        UUID refusedAttempt = aStartingAttempt(refused, "fake-a");
        publish(paidAttempt, paid);
        publish(refusedAttempt, refused);

        await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(jobState(paid)));
        await().atMost(Duration.ofSeconds(20)).until(() -> "failed".equals(attemptState(refusedAttempt)));
        ReceivedRequest call = requestsMatching("settled at its cost").get(0);
        BigDecimal cost = BigDecimal.valueOf(
                2L * call.usage().promptTokens() + call.usage().completionTokens());
        assertThat(new BigDecimal(text("SELECT cost_usd FROM attempt WHERE id = '" + paidAttempt + "'")))
                .isEqualByComparingTo(cost);
        assertThat(new BigDecimal(text("SELECT reserved_usd FROM attempt WHERE id = '" + paidAttempt + "'")))
                .isGreaterThanOrEqualTo(cost);
        assertThat(text("SELECT cost_usd FROM attempt WHERE id = '" + refusedAttempt + "'"))
                .isNull();
        assertThat(new BigDecimal(text("SELECT spent_usd FROM spend_window WHERE owner_id = 'alice'")))
                .isEqualByComparingTo(cost);
        assertThat(new BigDecimal(text("SELECT reserved_usd FROM spend_window WHERE owner_id = 'alice'")))
                .isZero();
    }

    /** An owner with a budget and a model without a price: the cost cannot be bounded, nothing is sent. */
    @Test
    void anOwnerWithABudgetSendsNothingToAModelWithoutAPrice() {
        aDailyBudgetForAlice(new BigDecimal("100"));
        UUID job = aJob("no price set");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(Duration.ofSeconds(20)).until(() -> "failed".equals(attemptState(attempt)));
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + attempt + "'"))
                .contains("no price is set for provider fake-a, model fake-a")
                .endsWith("no request sent");
        assertThat(jobState(job)).isEqualTo("needs_review");
        assertThat(requestsMatching("no price set")).isEmpty();
    }
}
