package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.DoubleStream;
import org.junit.jupiter.api.Test;

class ProviderOutageTest {

    private static final Duration WINDOW = Duration.ofSeconds(10);

    private static List<Instant> at(double... seconds) {
        Instant start = Instant.parse("2026-12-06T20:00:00Z");
        return Arrays.stream(seconds)
                .mapToObj(s -> start.plusMillis((long) (s * 1000)))
                .toList();
    }

    @Test
    void theBusiestStretchCountsTheFirstSendsLessThanAWindowApart() {
        // 0, 4 and 9.9 lie within 10 s of 0; 10 is a window after 0, so 4, 9.9, 10, 13 are the widest run.
        assertThat(ProviderOutage.busiestStretch(at(0, 4, 9.9, 10, 13, 30), WINDOW))
                .isEqualTo(4);
    }

    @Test
    void attemptsSpreadThinlyNeverMakeAStretchOfTheMinimum() {
        // CI, 2026-12-06: 8 attempts in a minute, one every 7.5 s.
        List<Instant> thin = at(0, 7.5, 15, 22.5, 30, 37.5, 45, 52.5);
        assertThat(ProviderOutage.busiestStretch(thin, WINDOW)).isEqualTo(2);
        assertThat(ProviderOutage.busiestStretch(List.of(), WINDOW)).isZero();
    }

    @Test
    void aBacklogReleasedAtOnceIsOneStretch() {
        double[] thin = {0, 20, 40};
        double[] burst = DoubleStream.iterate(50.0, s -> s + 0.1).limit(45).toArray();
        double[] all =
                DoubleStream.concat(Arrays.stream(thin), Arrays.stream(burst)).toArray();
        assertThat(ProviderOutage.busiestStretch(at(all), WINDOW)).isEqualTo(45);
    }
}
