package dev.jobapi.common.apply;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The apply key depends on what is applied, not on how its bytes happen to be rendered. */
class ApplyKeyTest {

    private static final UUID JOB = UUID.fromString("00000000-0000-0000-0000-000000000001");

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void sameJobPatchAndScopeGiveTheSameKey() {
        assertThat(ApplyKey.of(JOB, bytes("-a\n+b\n"), "git:demo"))
                .isEqualTo(ApplyKey.of(JOB, bytes("-a\n+b\n"), "git:demo"));
    }

    @Test
    void lineEndingsAndTrailingWhitespaceDoNotChangeTheKey() {
        assertThat(ApplyKey.of(JOB, bytes("-a  \r\n+b\t\r\n"), "s"))
                .isEqualTo(ApplyKey.of(JOB, bytes("-a\n+b\n"), "s"));
    }

    @Test
    void anotherJobPatchOrScopeGivesAnotherKey() {
        ApplyKey key = ApplyKey.of(JOB, bytes("-a\n+b\n"), "s");
        assertThat(ApplyKey.of(UUID.randomUUID(), bytes("-a\n+b\n"), "s")).isNotEqualTo(key);
        assertThat(ApplyKey.of(JOB, bytes("-a\n+c\n"), "s")).isNotEqualTo(key);
        assertThat(ApplyKey.of(JOB, bytes("-a\n+b\n"), "t")).isNotEqualTo(key);
        assertThat(key.value()).hasSize(64);
    }
}
