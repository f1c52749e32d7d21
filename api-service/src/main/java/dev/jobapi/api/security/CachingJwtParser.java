package dev.jobapi.api.security;

import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * smallrye-jwt's parser, verifying a bearer token once and trusting that verification for the
 * token's next requests ({@link VerifiedTokens}): a client sends the same token with every request,
 * and the RSA signature check was a tenth of the api's CPU per job (bench/ANALYSIS.md). Quarkus's
 * bearer-token validator takes its {@code JWTParser} from CDI, so this alternative stands in for the
 * default one there; every other method is the default parser's.
 */
@Alternative
@Priority(1)
@Singleton
public class CachingJwtParser extends DefaultJWTParser {

    private final VerifiedTokens verified;

    @Inject
    CachingJwtParser(VerifiedTokens verified) {
        this.verified = verified;
    }

    @Override
    public JsonWebToken parse(String bearerToken) throws ParseException {
        var known = verified.find(bearerToken);
        if (known.isPresent()) {
            return known.get();
        }
        JsonWebToken checked = super.parse(bearerToken); // a token that fails throws: never remembered
        verified.remember(bearerToken, checked);
        return checked;
    }
}
