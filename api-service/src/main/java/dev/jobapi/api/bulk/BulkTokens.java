package dev.jobapi.api.bulk;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The dry run's token: the action, the canonical filter, the count, the fingerprint of the matched
 * set and an expiry, signed with HMAC-SHA256 under a key kept in the database (table
 * bulk_token_key), so every replica verifies what another signed. An execution presents it; the
 * token proves the operator saw this count for this filter, and the fingerprint lets the execution
 * see whether the set changed since.
 */
@ApplicationScoped
public class BulkTokens {

    /** What a token says. */
    public record Claims(
            String action, Map<String, String> filter, long count, String fingerprint, Instant expiresAt) {}

    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    private final EntityManager em;
    private final ObjectMapper json;
    private volatile byte[] key;

    BulkTokens(EntityManager em, ObjectMapper json) {
        this.em = em;
        this.json = json;
    }

    public String sign(Claims claims) {
        try {
            byte[] payload = json.writeValueAsBytes(claims);
            return ENCODER.encodeToString(payload) + "." + ENCODER.encodeToString(mac(payload));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("claims of a bulk token do not serialise", e);
        }
    }

    /** The token's claims; a 400 when it is not one this service signed (expiry is the caller's check). */
    public Claims verify(String token) {
        int dot = token == null ? -1 : token.indexOf('.');
        if (dot > 0) {
            try {
                byte[] payload = DECODER.decode(token.substring(0, dot));
                byte[] signature = DECODER.decode(token.substring(dot + 1));
                if (MessageDigest.isEqual(mac(payload), signature)) {
                    return json.readValue(payload, Claims.class);
                }
            } catch (IllegalArgumentException | java.io.IOException e) {
                // Answered below: a token that does not decode is as foreign as one that does not verify.
            }
        }
        throw new ProblemException(
                Problem.INVALID_REQUEST, "'token' is not a dry run's token; run the dry run and send its token.");
    }

    private byte[] mac(byte[] payload) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key(), "HmacSHA256"));
            return mac.doFinal(payload);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    /** The shared key: made once by whichever replica needs it first ({@code ON CONFLICT DO NOTHING}), then read. */
    private byte[] key() {
        byte[] known = key;
        if (known != null) {
            return known;
        }
        byte[] fresh = new byte[32];
        new SecureRandom().nextBytes(fresh);
        byte[] stored = QuarkusTransaction.requiringNew().call(() -> {
            em.createNativeQuery("INSERT INTO bulk_token_key (id, secret) VALUES (1, ?1) ON CONFLICT (id) DO NOTHING")
                    .setParameter(1, fresh)
                    .executeUpdate();
            return (byte[]) em.createNativeQuery("SELECT secret FROM bulk_token_key WHERE id = 1")
                    .getSingleResult();
        });
        key = stored;
        return stored;
    }
}
