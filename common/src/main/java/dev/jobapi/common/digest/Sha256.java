package dev.jobapi.common.digest;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 digests as lower-case hex, optionally with the {@code sha256:} prefix the API shows. */
public final class Sha256 {

    private Sha256() {}

    public static String hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("Every Java runtime ships SHA-256", e);
        }
    }

    public static String hex(String text) {
        return hex(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The form used in representations and ETags: {@code sha256:<hex>}. */
    public static String prefixed(byte[] bytes) {
        return "sha256:" + hex(bytes);
    }
}
