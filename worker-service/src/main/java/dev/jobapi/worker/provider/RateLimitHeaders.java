package dev.jobapi.worker.provider;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.MessageHeaders;

/**
 * What a provider's response headers say about its rate limit: how long to wait before the next
 * call. Read are {@code retry-after-ms} and {@code retry-after} (seconds or an HTTP date, RFC 9110)
 * on a declined answer, and on any answer a remaining count of 0 with its reset: OpenAI's {@code
 * x-ratelimit-remaining-requests|tokens} with {@code x-ratelimit-reset-requests|tokens} (a
 * duration such as {@code 6m0s} or {@code 20ms}), Anthropic's {@code
 * anthropic-ratelimit-requests|tokens-remaining} with {@code ...-reset} (an RFC 3339 time).
 */
final class RateLimitHeaders {

    /** A wait the provider announced, and the header that said so. */
    record Announced(Duration delay, String header) {}

    private static final Pattern GO_DURATION =
            Pattern.compile("(?:(\\d+)h)?(?:(\\d+)m(?!s))?(?:(\\d+(?:\\.\\d+)?)s)?" + "(?:(\\d+(?:\\.\\d+)?)ms)?");

    private RateLimitHeaders() {}

    /** The wait a declined answer (429, 5xx) asks for: {@code retry-after-ms}, else {@code retry-after}. */
    static Optional<Announced> retryAfter(MessageHeaders headers, Instant now) {
        Optional<Announced> millis = firstValue(headers, "retry-after-ms")
                .flatMap(RateLimitHeaders::decimal)
                .map(ms -> new Announced(Duration.ofNanos((long) (ms * 1_000_000)), "retry-after-ms"));
        if (millis.isPresent()) {
            return millis;
        }
        return firstValue(headers, "retry-after").flatMap(value -> {
            Optional<Double> seconds = decimal(value);
            if (seconds.isPresent()) {
                return Optional.of(new Announced(Duration.ofMillis((long) (seconds.get() * 1000)), "retry-after"));
            }
            try {
                Instant at = ZonedDateTime.parse(value.trim(), DateTimeFormatter.RFC_1123_DATE_TIME)
                        .toInstant();
                return Optional.of(new Announced(positive(Duration.between(now, at)), "retry-after"));
            } catch (DateTimeParseException notADate) {
                return Optional.empty();
            }
        });
    }

    /** The wait until a remaining count of 0 resets, when any of the provider's counts is at 0. */
    static Optional<Announced> exhausted(MessageHeaders headers, Instant now) {
        for (String kind : new String[] {"requests", "tokens"}) {
            if (zero(headers, "x-ratelimit-remaining-" + kind)) {
                Optional<Duration> reset =
                        firstValue(headers, "x-ratelimit-reset-" + kind).flatMap(RateLimitHeaders::goDuration);
                if (reset.isPresent()) {
                    return Optional.of(new Announced(reset.get(), "x-ratelimit-remaining-" + kind + ": 0"));
                }
            }
            if (zero(headers, "anthropic-ratelimit-" + kind + "-remaining")) {
                Optional<Duration> reset = firstValue(headers, "anthropic-ratelimit-" + kind + "-reset")
                        .flatMap(value -> rfc3339(value, now));
                if (reset.isPresent()) {
                    return Optional.of(new Announced(reset.get(), "anthropic-ratelimit-" + kind + "-remaining: 0"));
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<String> firstValue(MessageHeaders headers, String name) {
        return Optional.ofNullable(headers.getFirstHeader(name)).map(Header::getValue);
    }

    private static boolean zero(MessageHeaders headers, String name) {
        return firstValue(headers, name).map(String::trim).filter("0"::equals).isPresent();
    }

    private static Optional<Double> decimal(String value) {
        try {
            double parsed = Double.parseDouble(value.trim());
            return parsed >= 0 && Double.isFinite(parsed) ? Optional.of(parsed) : Optional.empty();
        } catch (NumberFormatException notANumber) {
            return Optional.empty();
        }
    }

    /** A duration as OpenAI writes it (Go's format): {@code 1h2m3.5s}, {@code 6m0s}, {@code 20ms}. */
    static Optional<Duration> goDuration(String value) {
        String trimmed = value.trim();
        Matcher m = GO_DURATION.matcher(trimmed);
        if (trimmed.isEmpty() || !m.matches()) {
            return Optional.empty();
        }
        double millis = 0;
        if (m.group(1) != null) {
            millis += Long.parseLong(m.group(1)) * 3_600_000d;
        }
        if (m.group(2) != null) {
            millis += Long.parseLong(m.group(2)) * 60_000d;
        }
        if (m.group(3) != null) {
            millis += Double.parseDouble(m.group(3)) * 1000;
        }
        if (m.group(4) != null) {
            millis += Double.parseDouble(m.group(4));
        }
        return Optional.of(Duration.ofMillis((long) Math.ceil(millis)));
    }

    private static Optional<Duration> rfc3339(String value, Instant now) {
        try {
            return Optional.of(positive(
                    Duration.between(now, OffsetDateTime.parse(value.trim()).toInstant())));
        } catch (DateTimeParseException notATime) {
            return Optional.empty();
        }
    }

    private static Duration positive(Duration wait) {
        return wait.isNegative() ? Duration.ZERO : wait;
    }
}
