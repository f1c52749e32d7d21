package dev.jobapi.common.apply;

import dev.jobapi.common.digest.Sha256;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The exactly-once key of an apply: sha256(jobId : sha256(normalized patch) : scope). It is derived
 * from what is applied, never from when it was requested, so every retry and redelivery of the same
 * result computes the same key and finds the same {@code applied_patch} row.
 */
public record ApplyKey(String value) {

    public static ApplyKey of(UUID jobId, byte[] patch, String scope) {
        String patchDigest = Sha256.hex(normalize(patch));
        return new ApplyKey(Sha256.hex(jobId + ":" + patchDigest + ":" + scope));
    }

    /**
     * Unifies line endings and strips trailing whitespace per line, so two byte-wise different
     * renderings of one change get one key.
     */
    public static byte[] normalize(byte[] patch) {
        String text =
                new String(patch, StandardCharsets.UTF_8).replace("\r\n", "\n").replace('\r', '\n');
        StringBuilder out = new StringBuilder(text.length());
        for (String line : text.split("\n", -1)) {
            out.append(line.stripTrailing()).append('\n');
        }
        // split(-1) yields a trailing empty element for text ending in a newline; drop its extra newline.
        String normalized = out.toString().stripTrailing() + "\n";
        return normalized.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return value;
    }
}
