package dev.jobapi.api.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.SecurityIdentityAugmentor;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * What a verified token must also say before any handler runs (smallrye-jwt has checked signature,
 * issuer, audience, expiry and lifetime): a usable {@code sub}, because it is the owner of everything
 * the caller creates and the actor of everything audited; {@code groups} as an array of exact role
 * names, never a string that a separator would split into roles; and an {@code iat} that is not in
 * the future. A token that fails is refused as unauthenticated (401), like a forged one.
 */
@Singleton
public class TokenRules implements SecurityIdentityAugmentor {

    private final ObjectMapper mapper;
    private final VerifiedTokens verified;
    private final Clock clock;
    private final Duration clockSkew;

    TokenRules(
            ObjectMapper mapper,
            VerifiedTokens verified,
            Clock clock,
            // The same skew smallrye-jwt allows on exp, so both ends of a token's life have one tolerance.
            @ConfigProperty(name = "mp.jwt.verify.clock.skew") int clockSkewSeconds) {
        this.mapper = mapper;
        this.verified = verified;
        this.clock = clock;
        this.clockSkew = Duration.ofSeconds(clockSkewSeconds);
    }

    @Override
    public Uni<SecurityIdentity> augment(SecurityIdentity identity, AuthenticationRequestContext context) {
        if (identity.isAnonymous() || !(identity.getPrincipal() instanceof JsonWebToken token)) {
            return Uni.createFrom().item(identity);
        }
        try {
            check(token.getRawToken());
            return Uni.createFrom().item(identity);
        } catch (TokenRefusedException e) {
            return Uni.createFrom().failure(new AuthenticationFailedException(e.getMessage(), e));
        }
    }

    /**
     * The claim rules for a token whose signature was verified: the guard that reads bodies asks
     * them before a body is read, as the augmentor does before any handler runs. A token that met
     * them since its verification is not read again ({@link VerifiedTokens}).
     *
     * @throws TokenRefusedException naming the rule the token breaks
     */
    public void check(String rawToken) {
        if (rawToken != null && verified.metTheRules(rawToken)) {
            return;
        }
        check(claims(rawToken));
        verified.noteMetTheRules(rawToken);
    }

    /** The claims exactly as the issuer wrote them; the signature over them was verified already. */
    private JsonNode claims(String rawToken) {
        String[] parts = rawToken == null ? new String[0] : rawToken.split("\\.");
        try {
            return mapper.readTree(Base64.getUrlDecoder().decode(parts[1]));
        } catch (IOException | RuntimeException e) {
            throw new TokenRefusedException("The token's claims are not a JSON object.");
        }
    }

    private void check(JsonNode claims) {
        if (!Subjects.isUsable(claims.path("sub"))) {
            throw new TokenRefusedException(
                    "The token has no usable 'sub' (1-" + Subjects.MAX_LENGTH + " characters, no control characters).");
        }
        JsonNode groups = claims.get("groups");
        if (groups != null && !isArrayOfNames(groups)) {
            throw new TokenRefusedException("The token's 'groups' must be an array of role names.");
        }
        JsonNode issuedAt = claims.get("iat");
        if (issuedAt == null || !issuedAt.isNumber()) {
            throw new TokenRefusedException("The token has no 'iat'.");
        }
        Instant latest = clock.instant().plus(clockSkew);
        if (Instant.ofEpochSecond(issuedAt.asLong()).isAfter(latest)) {
            throw new TokenRefusedException("The token says it was issued in the future.");
        }
    }

    private static boolean isArrayOfNames(JsonNode groups) {
        if (!groups.isArray()) {
            return false;
        }
        for (JsonNode group : groups) {
            if (!group.isTextual()
                    || group.textValue().isEmpty()
                    || !group.textValue().chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                return false;
            }
        }
        return true;
    }
}
