package dev.jobapi.api;

import io.smallrye.jwt.build.Jwt;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Set;

/** Bearer tokens for tests, signed with the development key the test profile verifies against. */
public final class Tokens {

    private Tokens() {}

    public static String of(String subject, String... groups) {
        return Jwt.issuer("jobapi-dev")
                .subject(subject)
                .upn(subject)
                .groups(Set.of(groups))
                .expiresIn(3600)
                .sign();
    }

    public static String user(String subject) {
        return of(subject, "user");
    }

    public static String reviewer(String subject) {
        return of(subject, "user", "reviewer");
    }

    public static String expired(String subject) {
        return Jwt.issuer("jobapi-dev")
                .subject(subject)
                .groups(Set.of("user"))
                .issuedAt(Instant.now().minusSeconds(7200))
                .expiresAt(Instant.now().minusSeconds(3600))
                .sign();
    }

    /** A well-formed token signed by a key the service has never seen. */
    public static String signedWithAnotherKey(String subject) throws NoSuchAlgorithmException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        return Jwt.issuer("jobapi-dev")
                .subject(subject)
                .groups(Set.of("user"))
                .expiresIn(3600)
                .sign(generator.generateKeyPair().getPrivate());
    }
}
