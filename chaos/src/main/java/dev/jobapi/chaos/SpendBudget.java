package dev.jobapi.chaos;

import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The soak's money budgets (issue 32): before the load, an operator prices both providers' models and gives
 * one owner a day's budget small enough to run out during the run, and a month's budget for fake-a alone
 * that runs out sooner, so the claims of that owner's jobs race
 * for the last of it under every fault. The checker then holds the budget to what the claims reserved and
 * the providers reported ({@link Checker.Invariant#SPEND_WITHIN_BUDGET}); the load counts that owner's 429
 * {@code spend-budget-exceeded} answers as expected, anyone else's as unexpected.
 */
final class SpendBudget {

    /** The owner with a budget; the others have none. */
    static final String OWNER = "dave";

    static final String EXCEEDED = "spend-budget-exceeded";

    /** US dollars per million tokens, input and output, for fake-a's and fake-b's models alike. */
    static final BigDecimal INPUT_PRICE = new BigDecimal("3");

    static final BigDecimal OUTPUT_PRICE = new BigDecimal("15");

    /**
     * The budget per planned job of the run. A soak call of the budgeted owner costs about a thousandth of a
     * dollar at these prices, and she has about a quarter of the jobs, each about 1.8 calls: a budget of
     * 0.00015 USD a job is spent about a third of the way through her calls. Each claim reserves the most
     * its call could cost (4,096 output tokens: about 0.06 USD), so the last of it is raced for by few claims
     * at once, and by none once the spend leaves less than one call's reservation.
     */
    private static final BigDecimal PER_PLANNED_JOB = new BigDecimal("0.00015");

    private static final Duration PATIENCE = Duration.ofMinutes(1);

    private final Api api;
    private final String operatorToken;

    SpendBudget(Api api, String operatorToken) {
        this.api = api;
        this.operatorToken = operatorToken;
    }

    static BigDecimal limitFor(int plannedJobs) {
        return PER_PLANNED_JOB.multiply(BigDecimal.valueOf(plannedJobs)).setScale(6, java.math.RoundingMode.HALF_UP);
    }

    /** Sets the prices and the budget through the api, as an operator would; returns what was set. */
    String set(int plannedJobs) throws InterruptedException {
        for (String provider : List.of("fake-a", "fake-b")) {
            put(
                    "/admin/prices/" + provider,
                    "{\"model\": \"" + provider + "\", \"inputUsdPerMillionTokens\": "
                            + INPUT_PRICE + ", \"outputUsdPerMillionTokens\": " + OUTPUT_PRICE
                            + ", \"reason\": \"chaos soak\"}");
        }
        BigDecimal limit = limitFor(plannedJobs);
        put(
                "/admin/budgets/" + OWNER + "/day",
                "{\"limitUsd\": " + limit.toPlainString()
                        + ", \"reason\": \"chaos soak: a budget that runs out during the run\"}");
        // A budget of one provider besides it, run out sooner: her calls to fake-a race for the last of
        // both budgets, those to fake-b for the day's alone.
        BigDecimal fakeA = limit.divide(BigDecimal.valueOf(3), 6, java.math.RoundingMode.HALF_UP);
        put(
                "/admin/budgets/" + OWNER + "/month?provider=fake-a",
                "{\"limitUsd\": " + fakeA.toPlainString()
                        + ", \"reason\": \"chaos soak: a budget of one provider that runs out first\"}");
        return String.format(
                "fake-a and fake-b at %s/%s USD per million tokens; %s's day budget %s USD, her month budget"
                        + " for fake-a %s USD",
                INPUT_PRICE, OUTPUT_PRICE, OWNER, limit.toPlainString(), fakeA.toPlainString());
    }

    /** PUTs the body, on another process or later until one answers 200. */
    private void put(String path, String body) throws InterruptedException {
        Instant giveUp = Instant.now().plus(PATIENCE);
        String last = "no answer";
        for (int round = 0; Instant.now().isBefore(giveUp); round++) {
            try {
                Api.Answer answer = api.send(round % api.processes(), "PUT", path, operatorToken, null, body);
                if (answer.status() == 200) {
                    return;
                }
                last = answer.status() + " " + answer.body();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(1_000);
        }
        throw new IllegalStateException("PUT " + path + " was not answered 200: " + last);
    }
}
