package dev.jobapi.common.digest;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 digests as lower-case hex, optionally with the {@code sha256:} prefix the API shows. */
public final class Sha256 {

    /**
     * One digest a thread, reused: {@code digest} resets it. Looking the algorithm up for each call
     * was half of the digests' share of the worker's CPU (JFR, bench/ANALYSIS.md).
     */
    private static final ThreadLocal<MessageDigest> DIGEST = ThreadLocal.withInitial(Sha256::newDigest);

    private static final HexFormat HEX = HexFormat.of();

    private Sha256() {}

    public static String hex(byte[] bytes) {
        return HEX.formatHex(DIGEST.get().digest(bytes));
    }

    public static String hex(String text) {
        return hex(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The form used in representations and ETags: {@code sha256:<hex>}. */
    public static String prefixed(byte[] bytes) {
        return "sha256:" + hex(bytes);
    }

    private static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("Every Java runtime ships SHA-256", e);
        }
    }
}
