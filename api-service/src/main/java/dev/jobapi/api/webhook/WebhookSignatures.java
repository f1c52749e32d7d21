package dev.jobapi.api.webhook;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Standard Webhooks' symmetric scheme: a secret is {@code whsec_} and the base64 of 32 random bytes;
 * a signature is {@code v1,} and the base64 HMAC-SHA256, with the secret's bytes, of {@code
 * "<webhook-id>.<webhook-timestamp>.<body>"}; the header lists one per secret in force, separated by
 * spaces, so a receiver may move to a rotated secret at its own pace.
 */
final class WebhookSignatures {

    static final String SECRET_PREFIX = "whsec_";

    private static final SecureRandom RANDOM = new SecureRandom();

    private WebhookSignatures() {}

    static String newSecret() {
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        return SECRET_PREFIX + Base64.getEncoder().encodeToString(key);
    }

    /** The {@code webhook-signature} header: one {@code v1} signature per secret. */
    static String header(List<String> secrets, String webhookId, long timestamp, byte[] body) {
        return secrets.stream()
                .map(secret -> "v1," + sign(secret, webhookId, timestamp, body))
                .collect(Collectors.joining(" "));
    }

    private static String sign(String secret, String webhookId, long timestamp, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(
                    Base64.getDecoder().decode(secret.substring(SECRET_PREFIX.length())), "HmacSHA256"));
            mac.update((webhookId + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
            return Base64.getEncoder().encodeToString(mac.doFinal(body));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}
