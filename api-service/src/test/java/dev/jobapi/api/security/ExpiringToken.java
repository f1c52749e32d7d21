package dev.jobapi.api.security;

import java.util.Set;
import org.eclipse.microprofile.jwt.JsonWebToken;

/** A verified token as {@link VerifiedTokens} sees it: only its expiry matters. */
record ExpiringToken(long exp) implements JsonWebToken {
    @Override
    public String getName() {
        return "alice";
    }

    @Override
    public Set<String> getClaimNames() {
        return Set.of("exp");
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getClaim(String claimName) {
        return "exp".equals(claimName) ? (T) Long.valueOf(exp) : null;
    }
}
