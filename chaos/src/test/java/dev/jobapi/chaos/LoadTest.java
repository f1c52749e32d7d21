package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The load's sessions share their seeds' choices out evenly. */
class LoadTest {

    /**
     * Every owner gets about a quarter of the sessions' first draw (the owner), whatever the seed: with the
     * plain {@code seed * 1_000_003 + n}, seeds 42 and 8 gave carol and dave none, so the owner with the money
     * budget never had a job.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 7, 8, 42})
    void everyOwnerGetsAboutAQuarterOfTheSessions(long seed) {
        int sessions = 2_700;
        int[] perOwner = new int[Load.OWNERS.size()];
        for (int n = 0; n < sessions; n++) {
            perOwner[new Random(Load.sessionSeed(seed, n)).nextInt(Load.OWNERS.size())]++;
        }
        for (int count : perOwner) {
            assertThat(count).isBetween(sessions / 5, sessions * 3 / 10);
        }
    }
}
