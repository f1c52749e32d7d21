package dev.jobapi.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    private static final Clock NOON = Clock.fixed(Instant.parse("2026-12-01T12:00:00Z"), ZoneOffset.UTC);

    private static RetryPolicy withRandom(double random) {
        RetryPolicy d = RetryPolicy.defaults();
        return new RetryPolicy(d.maxAttempts(), d.baseDelay(), d.maxDelay(), d.maxRetryAfter(), () -> random);
    }

    @Test
    void backoffDoublesWithEqualJitterUpToTheCap() {
        assertThat(withRandom(0).backoff(1)).isEqualTo(Duration.ofMillis(125));
        assertThat(withRandom(0.999).backoff(1)).isLessThanOrEqualTo(Duration.ofMillis(250));
        assertThat(withRandom(0).backoff(3)).isEqualTo(Duration.ofMillis(500));
        assertThat(withRandom(0.999).backoff(30)).isLessThanOrEqualTo(Duration.ofSeconds(4));
        assertThat(withRandom(0).backoff(30)).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void retryAfterIsReadAsSecondsOrAsAnHttpDate() {
        assertThat(RetryPolicy.parseRetryAfter("7", NOON.instant())).contains(Duration.ofSeconds(7));
        assertThat(RetryPolicy.parseRetryAfter("Tue, 01 Dec 2026 12:00:30 GMT", NOON.instant()))
                .contains(Duration.ofSeconds(30));
        assertThat(RetryPolicy.parseRetryAfter("soon", NOON.instant())).isEmpty();
    }

    @Test
    void onlyAnswersThatDecidedNothingAreRetried() {
        RetryPolicy policy = RetryPolicy.defaults();
        assertThat(policy.afterAnswer(1, 503, ProblemCode.UNRECOGNIZED, null, NOON))
                .isPresent();
        assertThat(policy.afterAnswer(1, 429, ProblemCode.TOO_MANY_UPLOADS, null, NOON))
                .isPresent();
        assertThat(policy.afterAnswer(1, 429, ProblemCode.BUDGET_EXCEEDED, null, NOON))
                .isEmpty();
        assertThat(policy.afterAnswer(1, 409, ProblemCode.REVIEW_REQUIRED, null, NOON))
                .isEmpty();
        assertThat(policy.afterAnswer(1, 404, ProblemCode.JOB_NOT_FOUND, null, NOON))
                .isEmpty();
        assertThat(policy.afterAnswer(policy.maxAttempts(), 503, ProblemCode.UNRECOGNIZED, null, NOON))
                .isEmpty();
    }
}
