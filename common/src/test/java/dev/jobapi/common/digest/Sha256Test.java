package dev.jobapi.common.digest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** SHA-256 as the API shows it, from FIPS 180-2's vectors, on one thread and on many at once. */
class Sha256Test {

    private static final String ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    private static final String EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    @Test
    void digestsAsLowerCaseHexWithAndWithoutThePrefix() {
        assertThat(Sha256.hex("abc")).isEqualTo(ABC);
        assertThat(Sha256.hex("")).isEqualTo(EMPTY);
        assertThat(Sha256.prefixed("abc".getBytes(StandardCharsets.UTF_8))).isEqualTo("sha256:" + ABC);
    }

    /** The digest a thread keeps is reset by each call: no input leaks into the next one's digest. */
    @Test
    void manyThreadsDigestingAtOnceEachGetTheirInputsDigest() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int task = 0; task < 64; task++) {
                boolean abc = task % 2 == 0;
                results.add(threads.submit(() -> {
                    for (int i = 0; i < 1_000; i++) {
                        String expected = abc ? ABC : EMPTY;
                        if (!Sha256.hex(abc ? "abc" : "").equals(expected)) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (Future<Boolean> result : results) {
                assertThat(result.get()).isTrue();
            }
        } finally {
            threads.shutdownNow();
        }
    }
}
