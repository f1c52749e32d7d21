package dev.jobapi.api.security;

import jakarta.inject.Singleton;
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
 *
 * <p>A held token also notes when it met {@link TokenRules}: a request asks the rules three times
 * (the trace context's check, the upload guard, the augmentor), each a read of the raw claims, and a
 * token that met them meets them again (each rule reads only the claims, and the one that reads the
 * clock refuses an {@code iat} ahead of it, which the clock only leaves behind). The note goes with
 * the entry: a token verified again is held to the rules again.
 */
@Singleton
final class VerifiedTokens {

    /** How long one verification is reused at most; it bounds how long a token outlives its key. */
    static final Duration TRUST = Duration.ofMinutes(1);

    /** Most tokens held at once. */
    static final int CAPACITY = 10_000;

    private record Verified(JsonWebToken token, Instant trustedUntil, boolean metTheRules) {}

    private final ConcurrentHashMap<String, Verified> verified = new ConcurrentHashMap<>();
    private final Clock clock;

    VerifiedTokens(Clock clock) {
        this.clock = clock;
    }

    /** The token as verified earlier, while that verification is still trusted. */
    Optional<JsonWebToken> find(String rawToken) {
        return trusted(rawToken).map(Verified::token);
    }

    /** Whether the token is held, still trusted, and met the claim rules since it was verified. */
    boolean metTheRules(String rawToken) {
        return trusted(rawToken).filter(Verified::metTheRules).isPresent();
    }

    /** Notes that a held token met the claim rules; a token not held (not verified, or no longer trusted) is not noted. */
    void noteMetTheRules(String rawToken) {
        verified.computeIfPresent(rawToken, (token, known) -> new Verified(known.token(), known.trustedUntil(), true));
    }

    private Optional<Verified> trusted(String rawToken) {
        Verified known = verified.get(rawToken);
        if (known == null) {
            return Optional.empty();
        }
        if (!clock.instant().isBefore(known.trustedUntil())) {
            verified.remove(rawToken, known);
            return Optional.empty();
        }
        return Optional.of(known);
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
        verified.put(rawToken, new Verified(token, trustedUntil, false));
    }
}
