package dev.jobapi.api;

import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.build.JwtClaimsBuilder;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Set;

/**
 * Bearer tokens for tests, signed with the development key the test profile verifies against. The
 * good ones are what production expects (issuer, audience {@code jobapi}, sub, groups as an array,
 * iat, a lifetime within twelve hours); each bad one breaks exactly one of those rules.
 */
public final class Tokens {

    static final String ISSUER = "jobapi-dev";
    static final String AUDIENCE = "jobapi";

    private Tokens() {}

    private static JwtClaimsBuilder valid(String subject, String... groups) {
        return Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .subject(subject)
                .upn(subject)
                .groups(Set.of(groups))
                .issuedAt(Instant.now())
                .expiresIn(3600);
    }

    public static String of(String subject, String... groups) {
        return valid(subject, groups).sign();
    }

    public static String user(String subject) {
        return of(subject, "user");
    }

    public static String reviewer(String subject) {
        return of(subject, "user", "reviewer");
    }

    public static String expired(String subject) {
        return valid(subject, "user")
                .issuedAt(Instant.now().minusSeconds(7200))
                .expiresAt(Instant.now().minusSeconds(3600))
                .sign();
    }

    /** Expired 45 s ago: past the 30 s clock skew, so refused even though it is recent. */
    public static String justExpired(String subject) {
        return valid(subject, "user")
                .issuedAt(Instant.now().minusSeconds(600))
                .expiresAt(Instant.now().minusSeconds(45))
                .sign();
    }

    /** A well-formed token signed by a key the service has never seen. */
    public static String signedWithAnotherKey(String subject) throws NoSuchAlgorithmException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        return valid(subject, "user").sign(generator.generateKeyPair().getPrivate());
    }

    /** Signed by our key, with {@code upn} but no {@code sub}. */
    public static String withoutSubject(String upn, String... groups) {
        return Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .upn(upn)
                .groups(Set.of(groups))
                .issuedAt(Instant.now())
                .expiresIn(3600)
                .sign();
    }

    /** Signed by our key, with a subject that is empty or otherwise unusable as an owner id. */
    public static String withSubject(String rawSubject, String... groups) {
        return valid("placeholder", groups).subject(rawSubject).sign();
    }

    /** A token minted for another service. */
    public static String forAudience(String audience, String subject) {
        return valid(subject, "user").audience(audience).sign();
    }

    /** A lifetime (exp - iat) of thirteen hours: longer than the twelve the API accepts. */
    public static String tooLongLived(String subject) {
        return valid(subject, "user")
                .issuedAt(Instant.now().minusSeconds(3600))
                .expiresAt(Instant.now().plusSeconds(12 * 3600))
                .sign();
    }

    /** Issued an hour from now. */
    public static String issuedInTheFuture(String subject) {
        return valid(subject, "user")
                .issuedAt(Instant.now().plusSeconds(3600))
                .expiresAt(Instant.now().plusSeconds(7200))
                .sign();
    }

    /** {@code groups} as one string with a space, which a separator would split into two roles. */
    public static String groupsAsString(String subject, String groups) {
        return valid(subject).claim("groups", groups).sign();
    }
}
