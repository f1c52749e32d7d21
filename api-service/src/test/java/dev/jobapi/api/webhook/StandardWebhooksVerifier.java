package dev.jobapi.api.webhook;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.Base64;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A receiver's check of symmetric ({@code v1}) Standard Webhooks 1.0.0 signatures, written from the specification
 * text alone and on purpose sharing no code with the server's signer: a test that verifies a delivery with it checks
 * the server against the specification rather than against itself.
 */
public final class StandardWebhooksVerifier {

    private static final String SECRET_PREFIX = "whsec_";
    private static final int MIN_KEY_BYTES = 24;
    private static final int MAX_KEY_BYTES = 64;
    private static final long TOLERANCE_SECONDS = 5 * 60;

    private final byte[] key;
    private final Clock clock;

    public StandardWebhooksVerifier(String serializedSecret) {
        this(serializedSecret, Clock.systemUTC());
    }

    public StandardWebhooksVerifier(String serializedSecret, Clock clock) {
        if (serializedSecret == null || !serializedSecret.startsWith(SECRET_PREFIX)) {
            throw new IllegalArgumentException("a symmetric secret is serialized as whsec_<base64>");
        }
        try {
            this.key = Base64.getDecoder().decode(serializedSecret.substring(SECRET_PREFIX.length()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the secret after whsec_ is not standard base64", e);
        }
        if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException(
                    "the secret is " + key.length + " bytes, not " + MIN_KEY_BYTES + " to " + MAX_KEY_BYTES);
        }
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** Throws {@link VerificationFailed}, with a message saying why, unless the delivery verifies. */
    public void verify(String webhookId, String webhookTimestamp, String webhookSignature, byte[] body) {
        int matching = matchingSignatures(webhookId, webhookTimestamp, webhookSignature, body);
        long skew = Math.abs(clock.instant().getEpochSecond() - Long.parseLong(webhookTimestamp));
        if (skew > TOLERANCE_SECONDS) {
            throw new VerificationFailed("webhook-timestamp " + webhookTimestamp + " is " + skew
                    + " s from now, outside the " + TOLERANCE_SECONDS + " s tolerance");
        }
        if (matching == 0) {
            throw new VerificationFailed("no v1 signature in webhook-signature '" + webhookSignature
                    + "' matches the signed content with this secret");
        }
    }

    /**
     * How many of the header's {@code v1} signatures verify with this secret (0, 1, ...), ignoring the timestamp
     * tolerance check. Throws {@link VerificationFailed} when a header is missing or malformed, since then there is
     * no signed content to check against.
     */
    public int matchingSignatures(String webhookId, String webhookTimestamp, String webhookSignature, byte[] body) {
        requireHeader("webhook-id", webhookId);
        requireHeader("webhook-timestamp", webhookTimestamp);
        requireHeader("webhook-signature", webhookSignature);
        Objects.requireNonNull(body, "body");
        if (webhookId.contains(".")) {
            throw new VerificationFailed("webhook-id '" + webhookId + "' contains a '.'");
        }
        if (!webhookTimestamp.matches("[0-9]{1,18}")) {
            throw new VerificationFailed("webhook-timestamp '" + webhookTimestamp + "' is not integer unix seconds");
        }
        byte[] expected = Base64.getEncoder().encode(hmacSha256(webhookId, webhookTimestamp, body));
        int matching = 0;
        for (String entry : webhookSignature.split(" ")) {
            if (entry.startsWith("v1,")
                    && MessageDigest.isEqual(
                            expected, entry.substring("v1,".length()).getBytes(StandardCharsets.US_ASCII))) {
                matching++;
            }
        }
        return matching;
    }

    private byte[] hmacSha256(String webhookId, String webhookTimestamp, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update((webhookId + "." + webhookTimestamp + ".").getBytes(StandardCharsets.UTF_8));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is unavailable", e);
        }
    }

    private static void requireHeader(String name, String value) {
        if (value == null || value.isEmpty()) {
            throw new VerificationFailed("the " + name + " header is missing");
        }
    }

    /** A delivery that does not verify; the message says why. */
    public static final class VerificationFailed extends RuntimeException {
        VerificationFailed(String message) {
            super(message);
        }
    }
}
