package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.api.security.CachingJwtParser;
import io.quarkus.arc.ClientProxy;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.jwt.auth.principal.JWTParser;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/** A bearer token is verified once and its verification reused; nothing else about it is. */
@QuarkusTest
class TokenVerificationTest extends ApiTestSupport {

    @Inject
    JWTParser parser;

    @Test
    void theBearerTokenValidatorVerifiesThroughTheRememberingParser() {
        assertThat(ClientProxy.unwrap(parser)).isInstanceOf(CachingJwtParser.class);
        String token = Tokens.user("alice");
        as(token).get("/jobs").then().statusCode(200);
        as(token).get("/jobs").then().statusCode(200);
    }

    @Test
    void aTokenWhoseSignatureIsRememberedIsStillHeldToTheRulesOnEveryRequest() {
        // Its signature verifies, so the parser remembers it; the rules on its claims refuse it each time.
        String groupsAsOneString = Tokens.groupsAsString("alice", "user reviewer");
        as(groupsAsOneString).get("/jobs").then().statusCode(401);
        as(groupsAsOneString).get("/jobs").then().statusCode(401);
    }

    @Test
    void aForgedOrExpiredTokenIsRefusedAfterAGoodOneOfTheSameCaller() throws Exception {
        as(Tokens.user("alice")).get("/jobs").then().statusCode(200);
        as(Tokens.signedWithAnotherKey("alice")).get("/jobs").then().statusCode(401);
        as(Tokens.justExpired("alice")).get("/jobs").then().statusCode(401);
    }
}
