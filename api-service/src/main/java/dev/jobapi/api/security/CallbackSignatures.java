package dev.jobapi.api.security;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Verifies provider callbacks: header {@code Jobapi-Signature: t=<unix seconds>,v1=<hex>} where the
 * hex is HMAC-SHA256 with the provider's secret over {@code "<t>." + raw body}. The timestamp is
 * signed with the body, so a captured callback cannot be re-sent outside the window.
 */
@ApplicationScoped
public class CallbackSignatures {

    public static final String HEADER = "Jobapi-Signature";

    private final JobApiConfig.Callbacks config;
    private final Duration window;
    private final Clock clock;

    CallbackSignatures(JobApiConfig apiConfig, Clock clock) {
        this.config = apiConfig.callbacks();
        this.window = config.window();
        this.clock = clock;
    }

    /**
     * Checks the signature of {@code body}; returns the signed time.
     *
     * @throws ProblemException 404 when the provider has no callback secret, 401 when the signature is
     *     missing, malformed, wrong, or outside the window
     */
    public Instant verify(String provider, String header, byte[] body) {
        byte[] secret = secret(provider)
                .orElseThrow(() -> new ProblemException(
                        Problem.NOT_FOUND, "Provider '" + provider + "' has no callback endpoint."));
        Signed signed = parse(header);
        // Compare in constant time, and before looking at the clock, so a forger learns nothing.
        if (!MessageDigest.isEqual(signed.signature(), sign(secret, signed.timestamp(), body))) {
            throw new ProblemException(Problem.SIGNATURE_INVALID, "The signature does not match the body.");
        }
        return requireInWindow(signed.timestamp());
    }

    /**
     * What can be checked before the body arrives, so that nobody without a signed header can make
     * the server wait for a body: the provider has a secret, the header is well formed, and its time
     * is inside the window. {@link #verify} still checks the signature over the whole body.
     */
    public void precheck(String provider, String header) {
        if (secret(provider).isEmpty()) {
            throw new ProblemException(Problem.NOT_FOUND, "Provider '" + provider + "' has no callback endpoint.");
        }
        requireInWindow(parse(header).timestamp());
    }

    /** The header's two parts. */
    private record Signed(long timestamp, byte[] signature) {}

    private static Signed parse(String header) {
        Long timestamp = null;
        byte[] signature = null;
        for (String part : header == null ? new String[0] : header.split(",")) {
            String[] pair = part.trim().split("=", 2);
            try {
                if (pair.length == 2 && pair[0].equals("t")) {
                    timestamp = Long.parseLong(pair[1]);
                } else if (pair.length == 2 && pair[0].equals("v1")) {
                    signature = HexFormat.of().parseHex(pair[1]);
                }
            } catch (IllegalArgumentException e) {
                throw new ProblemException(Problem.SIGNATURE_INVALID, HEADER + " is malformed: " + part.trim());
            }
        }
        if (timestamp == null || signature == null) {
            throw new ProblemException(Problem.SIGNATURE_INVALID, HEADER + " must be t=<unix seconds>,v1=<hex HMAC>.");
        }
        return new Signed(timestamp, signature);
    }

    private Instant requireInWindow(long timestamp) {
        Instant signedAt;
        try {
            signedAt = Instant.ofEpochSecond(timestamp);
        } catch (java.time.DateTimeException e) {
            throw new ProblemException(Problem.SIGNATURE_EXPIRED, "The signature's time is out of any range.");
        }
        Duration age = Duration.between(signedAt, clock.instant()).abs();
        if (age.compareTo(window) > 0) {
            throw new ProblemException(
                    Problem.SIGNATURE_EXPIRED,
                    "Signed at " + signedAt + ", " + age.toSeconds() + " s from now; the window is " + window + ".");
        }
        return signedAt;
    }

    /** The signature a provider sends: HMAC-SHA256(secret, "<t>." + body). */
    public static byte[] sign(byte[] secret, long timestamp, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    private Optional<byte[]> secret(String provider) {
        return Optional.ofNullable(config.provider().get(provider))
                .flatMap(JobApiConfig.Callbacks.CallbackProvider::secret)
                .filter(secret -> !secret.isBlank())
                .map(secret -> secret.getBytes(StandardCharsets.UTF_8));
    }
}
