package dev.jobapi.api.security;

import io.smallrye.jwt.auth.principal.JWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import jakarta.inject.Singleton;
import java.util.Optional;

/**
 * The check of a bearer token made before the request reaches the application's authentication:
 * by the guard that reads bodies and by the trace context's extraction, both of which run on the
 * event loop before routing. The same parser ({@link CachingJwtParser}) and claim rules ({@link
 * TokenRules}) as the authentication itself, so a token passes here exactly when it would there.
 */
@Singleton
public class BearerTokens {

    private static final String BEARER = "Bearer ";

    private final JWTParser parser;
    private final TokenRules rules;

    BearerTokens(JWTParser parser, TokenRules rules) {
        this.parser = parser;
        this.rules = rules;
    }

    /** The token of an {@code Authorization} header, when it is a bearer one. */
    public static Optional<String> of(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Optional.empty();
        }
        return Optional.of(authorization.substring(BEARER.length()).trim());
    }

    /**
     * Verifies signature, issuer, audience, lifetime and the claim rules.
     *
     * @throws TokenRefusedException naming the claim rule the token breaks
     * @throws ParseException or any other exception when the token is not ours or not valid
     */
    public void verify(String token) throws ParseException {
        parser.parse(token);
        rules.check(token);
    }

    /** Whether an {@code Authorization} header carries a token {@link #verify} accepts. */
    public boolean known(String authorization) {
        Optional<String> token = of(authorization);
        if (token.isEmpty()) {
            return false;
        }
        try {
            verify(token.get());
            return true;
        } catch (ParseException | RuntimeException notOurs) {
            return false;
        }
    }
}
