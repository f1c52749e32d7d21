package dev.jobapi.client;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * When to try a request again, and after how long. Only answers that say "nothing was decided, try
 * later" are retried: a failed connection, 408, 429 other than budget-exceeded, 500, 502, 503, 504.
 * Every other 4xx is the API's decision and the same request gets the same answer. The API has no
 * "same key still in flight" 409: a concurrent request with the same key waits on the database and
 * then replays, so every 409 it sends (review-required, job-closed, ...) is a decision too.
 *
 * <p>The wait grows exponentially from {@code baseDelay} up to {@code maxDelay} with equal jitter (half
 * fixed, half random), so clients that failed together do not come back together. A {@code Retry-After}
 * from the API replaces the computed wait; one longer than {@code maxRetryAfter} ends the retries.
 */
public record RetryPolicy(
        int maxAttempts, Duration baseDelay, Duration maxDelay, Duration maxRetryAfter, DoubleSupplier random) {

    /**
     * Five tries within about ten seconds: long enough to ride out a restart of one api replica or a
     * dropped connection, short enough that a person at a terminal is told something.
     */
    public static RetryPolicy defaults() {
        return new RetryPolicy(
                5,
                Duration.ofMillis(250),
                Duration.ofSeconds(4),
                Duration.ofSeconds(60),
                () -> ThreadLocalRandom.current().nextDouble());
    }

    /** No retries at all: the first failure is reported. */
    public static RetryPolicy none() {
        return defaults().withMaxAttempts(1);
    }

    public RetryPolicy withMaxAttempts(int attempts) {
        if (attempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        return new RetryPolicy(attempts, baseDelay, maxDelay, maxRetryAfter, random);
    }

    /** True for answers that decided nothing. */
    public static boolean isRetryable(int status, ProblemCode code) {
        return switch (status) {
            case 408, 500, 502, 503, 504 -> true;
            case 429 -> code != ProblemCode.BUDGET_EXCEEDED && code != ProblemCode.SPEND_BUDGET_EXCEEDED;
            default -> false;
        };
    }

    /**
     * The wait before try {@code attempt + 1} after an error answer to try {@code attempt}, or empty
     * when the request should not be tried again.
     */
    Optional<Duration> afterAnswer(int attempt, int status, ProblemCode code, String retryAfter, Clock clock) {
        if (attempt >= maxAttempts || !isRetryable(status, code)) {
            return Optional.empty();
        }
        Optional<Duration> asked = parseRetryAfter(retryAfter, clock.instant());
        if (asked.isPresent()) {
            return asked.get().compareTo(maxRetryAfter) > 0 ? Optional.empty() : asked;
        }
        return Optional.of(backoff(attempt));
    }

    /** The wait before try {@code attempt + 1} after a failed connection, or empty when tries ran out. */
    Optional<Duration> afterConnectionFailure(int attempt) {
        return attempt >= maxAttempts ? Optional.empty() : Optional.of(backoff(attempt));
    }

    /** Exponential from baseDelay, capped at maxDelay, with equal jitter. */
    Duration backoff(int attempt) {
        long ceiling = baseDelay.toMillis() << Math.min(attempt - 1, 20);
        long capped = Math.min(ceiling, maxDelay.toMillis());
        long half = capped / 2;
        return Duration.ofMillis(half + (long) (random.getAsDouble() * (capped - half)));
    }

    /** RFC 9110 Retry-After: delay-seconds or an HTTP-date; anything else is ignored. */
    static Optional<Duration> parseRetryAfter(String value, Instant now) {
        if (value == null || value.isBlank()) {
            return Optional.empty();
        }
        String trimmed = value.trim();
        if (trimmed.chars().allMatch(Character::isDigit)) {
            try {
                return Optional.of(Duration.ofSeconds(Long.parseLong(trimmed)));
            } catch (NumberFormatException tooLarge) {
                return Optional.of(Duration.ofSeconds(Long.MAX_VALUE / 1_000_000_000L));
            }
        }
        try {
            Instant at = ZonedDateTime.parse(trimmed, DateTimeFormatter.RFC_1123_DATE_TIME)
                    .toInstant();
            Duration wait = Duration.between(now, at);
            return Optional.of(wait.isNegative() ? Duration.ZERO : wait);
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }
}
