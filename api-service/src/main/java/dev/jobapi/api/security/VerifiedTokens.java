package dev.jobapi.api.security;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * Bearer tokens whose signature and claims were verified, trusted again without a second check until
 * the earlier of their expiry and {@link #TRUST} after the check. Keyed by the whole token as sent,
 * so a token that differs in one character is a stranger and is verified in full; a token that
 * failed is never here. Bounded: once {@link #CAPACITY} live tokens are held, a new one is verified
 * on every request rather than remembered.
 *
 * <p>The trust ends at {@code exp} itself, without the clock skew the verifier allows past it: a
 * token near its end goes back to the verifier, which decides with its own tolerance.
 */
final class VerifiedTokens {

    /** How long one verification is reused at most; it bounds how long a token outlives its key. */
    static final Duration TRUST = Duration.ofMinutes(1);

    /** Most tokens held at once. */
    static final int CAPACITY = 10_000;

    private record Verified(JsonWebToken token, Instant trustedUntil) {}

    private final ConcurrentHashMap<String, Verified> verified = new ConcurrentHashMap<>();
    private final Clock clock;

    VerifiedTokens(Clock clock) {
        this.clock = clock;
    }

    /** The token as verified earlier, while that verification is still trusted. */
    Optional<JsonWebToken> find(String rawToken) {
        Verified known = verified.get(rawToken);
        if (known == null) {
            return Optional.empty();
        }
        if (!clock.instant().isBefore(known.trustedUntil())) {
            verified.remove(rawToken, known);
            return Optional.empty();
        }
        return Optional.of(known.token());
    }

    /** Remembers a token the verifier has just accepted. */
    void remember(String rawToken, JsonWebToken token) {
        Instant now = clock.instant();
        // A token without exp has expiry 0 and is never remembered.
        Instant expiry = Instant.ofEpochSecond(token.getExpirationTime());
        Instant trustedUntil = now.plus(TRUST).isBefore(expiry) ? now.plus(TRUST) : expiry;
        if (!now.isBefore(trustedUntil)) {
            return;
        }
        if (verified.size() >= CAPACITY) {
            verified.values().removeIf(held -> !now.isBefore(held.trustedUntil()));
            if (verified.size() >= CAPACITY) {
                return;
            }
        }
        verified.put(rawToken, new Verified(token, trustedUntil));
    }
}
