package dev.jobapi.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileIdempotencyKeysTest {

    @TempDir
    Path directory;

    @Test
    void aPendingKeySurvivesTheProcessThatMintedIt() {
        String minted = new FileIdempotencyKeys(directory).keyFor("abc123");

        assertThat(new FileIdempotencyKeys(directory).keyFor("abc123")).isEqualTo(minted);
    }

    @Test
    void aSettledIntentionGetsANewKeyNextTime() {
        FileIdempotencyKeys keys = new FileIdempotencyKeys(directory);
        String first = keys.keyFor("abc123");

        keys.settle("abc123");
        keys.settle("abc123");

        assertThat(new FileIdempotencyKeys(directory).keyFor("abc123")).isNotEqualTo(first);
    }
}
