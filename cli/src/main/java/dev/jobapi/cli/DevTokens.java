package dev.jobapi.cli;

import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.util.KeyUtils;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.UUID;

/**
 * Development bearer tokens, as the locally run api accepts them: RS256 signed with the development
 * key (dev/jwt/private.pem), issuer jobapi-dev, audience jobapi, sub and upn, groups as an array,
 * iat, exp and jti. Issuer, audience and key can be changed through the environment for a cluster
 * that was given its own key (k8s/README.md).
 */
final class DevTokens {

    /** The API refuses a token whose lifetime (exp - iat) is longer (smallrye.jwt.time-to-live). */
    static final long MAX_TTL_SECONDS = 43_200;

    private static final String KEY_ID = "jobapi-dev";

    private final PrivateKey key;
    private final String issuer;
    private final String audience;

    private DevTokens(PrivateKey key, String issuer, String audience) {
        this.key = key;
        this.issuer = issuer;
        this.audience = audience;
    }

    /** The key, issuer and audience from JOBCTL_JWT_PRIVATE_KEY, JOBCTL_JWT_ISSUER, JOBCTL_JWT_AUDIENCE. */
    static DevTokens fromEnvironment() {
        Path keyFile = Path.of(env("JOBCTL_JWT_PRIVATE_KEY", "dev/jwt/private.pem"));
        return new DevTokens(
                readKey(keyFile), env("JOBCTL_JWT_ISSUER", "jobapi-dev"), env("JOBCTL_JWT_AUDIENCE", "jobapi"));
    }

    static DevTokens of(Path keyFile, String issuer, String audience) {
        return new DevTokens(readKey(keyFile), issuer, audience);
    }

    String mint(String subject, List<String> groups, long ttlSeconds) {
        Instant now = Instant.now();
        return Jwt.issuer(issuer)
                .audience(audience)
                .subject(subject)
                .upn(subject)
                .groups(new LinkedHashSet<>(groups))
                .issuedAt(now)
                .expiresAt(now.plusSeconds(ttlSeconds))
                .claim("jti", UUID.randomUUID().toString())
                .jws()
                .keyId(KEY_ID)
                .sign(key);
    }

    private static PrivateKey readKey(Path keyFile) {
        try {
            return KeyUtils.decodePrivateKey(Files.readString(keyFile));
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalStateException(
                    "JWT signing key not readable: " + keyFile + " (" + e.getMessage() + ")", e);
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
