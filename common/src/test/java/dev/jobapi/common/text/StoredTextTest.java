package dev.jobapi.common.text;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StoredTextTest {

    @Test
    void nulIsReplacedSoPostgresqlTakesTheText() {
        assertThat(StoredText.of("bad hunk @@ -1\0,2 @@")).isEqualTo("bad hunk @@ -1\uFFFD,2 @@");
    }

    @Test
    void longTextIsCutAtTheBoundWithoutSplittingASurrogatePair() {
        String text = "a".repeat(StoredText.MAX_CHARS - 1) + "\uD83D\uDE00" + "b".repeat(10);
        String stored = StoredText.of(text);
        assertThat(stored).startsWith("a".repeat(StoredText.MAX_CHARS - 1) + "…");
        assertThat(stored).endsWith("(12 more characters)");
        assertThat(StoredText.of("short")).isEqualTo("short");
        assertThat(StoredText.of(null)).isNull();
    }
}
