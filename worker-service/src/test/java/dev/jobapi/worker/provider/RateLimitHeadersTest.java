package dev.jobapi.worker.provider;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.apache.hc.core5.http.MessageHeaders;
import org.apache.hc.core5.http.message.BasicHttpResponse;
import org.junit.jupiter.api.Test;

/** How the waits providers announce in their headers are read (docs/design.md, rule 21). */
class RateLimitHeadersTest {

    private static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");

    @Test
    void retryAfterIsReadInMillisecondsSecondsOrAsAnHttpDate() {
        assertThat(RateLimitHeaders.retryAfter(headers("retry-after-ms", "1500", "retry-after", "9"), NOW))
                .hasValue(new RateLimitHeaders.Announced(Duration.ofMillis(1500), "retry-after-ms"));
        assertThat(RateLimitHeaders.retryAfter(headers("retry-after", "20"), NOW))
                .hasValue(new RateLimitHeaders.Announced(Duration.ofSeconds(20), "retry-after"));
        String date =
                DateTimeFormatter.RFC_1123_DATE_TIME.format(NOW.plusSeconds(45).atZone(ZoneOffset.UTC));
        assertThat(RateLimitHeaders.retryAfter(headers("retry-after", date), NOW))
                .hasValue(new RateLimitHeaders.Announced(Duration.ofSeconds(45), "retry-after"));
    }

    @Test
    void aRetryAfterThatIsNoTimeIsNotAWait() {
        assertThat(RateLimitHeaders.retryAfter(headers("retry-after", "soon"), NOW))
                .isEmpty();
        assertThat(RateLimitHeaders.retryAfter(headers("retry-after", "-5"), NOW))
                .isEmpty();
        assertThat(RateLimitHeaders.retryAfter(headers("retry-after", "NaN"), NOW))
                .isEmpty();
        assertThat(RateLimitHeaders.retryAfter(headers(), NOW)).isEmpty();
    }

    @Test
    void aRemainingCountOfZeroWaitsUntilItsReset() {
        assertThat(RateLimitHeaders.exhausted(
                        headers("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "6m0s"), NOW))
                .hasValue(new RateLimitHeaders.Announced(Duration.ofMinutes(6), "x-ratelimit-remaining-requests: 0"));
        assertThat(RateLimitHeaders.exhausted(
                        headers(
                                "anthropic-ratelimit-tokens-remaining",
                                "0",
                                "anthropic-ratelimit-tokens-reset",
                                NOW.plusSeconds(30).toString()),
                        NOW))
                .hasValue(new RateLimitHeaders.Announced(
                        Duration.ofSeconds(30), "anthropic-ratelimit-tokens-remaining: 0"));
        assertThat(RateLimitHeaders.exhausted(
                        headers("x-ratelimit-remaining-requests", "12", "x-ratelimit-reset-requests", "6m0s"), NOW))
                .isEmpty();
    }

    @Test
    void openAisDurationsAreRead() {
        assertThat(RateLimitHeaders.goDuration("20ms")).hasValue(Duration.ofMillis(20));
        assertThat(RateLimitHeaders.goDuration("1.5s")).hasValue(Duration.ofMillis(1500));
        assertThat(RateLimitHeaders.goDuration("1h2m3s")).hasValue(Duration.ofSeconds(3723));
        assertThat(RateLimitHeaders.goDuration("6m0s")).hasValue(Duration.ofMinutes(6));
        assertThat(RateLimitHeaders.goDuration("")).isEmpty();
        assertThat(RateLimitHeaders.goDuration("later")).isEmpty();
    }

    private static MessageHeaders headers(String... namesAndValues) {
        BasicHttpResponse response = new BasicHttpResponse(200);
        for (int i = 0; i < namesAndValues.length; i += 2) {
            response.addHeader(namesAndValues[i], namesAndValues[i + 1]);
        }
        return response;
    }
}
