package dev.jobapi.api.security;

/**
 * Why a token whose signature verifies breaks one of {@link TokenRules}; carried as the cause of the
 * authentication failure, so the 401 can say which rule.
 */
public class TokenRefusedException extends RuntimeException {

    public TokenRefusedException(String reason) {
        super(reason);
    }
}
