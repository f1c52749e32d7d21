package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The digest is RFC 8785 exact and the body I-JSON (RFC 7493): what a double would change, and lone
 * surrogates, are refused with {@code not-i-json} before anything is stored.
 */
@QuarkusTest
class CanonicalIntakeTest extends ApiTestSupport {

    private final String alice = Tokens.user("alice");

    @ParameterizedTest
    @ValueSource(strings = {"9007199254740993", "-9007199254740993", "0.30000000000000001", "4.9e-324", "1e-400"})
    void numbersADoubleWouldChangeAreRefusedWithNotIJson(String number) {
        createJob(alice, "k", "{\"input\":{\"prompt\":\"p\",\"n\":[1," + number + "]}}")
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("code", equalTo("not-i-json"))
                .body("detail", containsString("'/input/n/1'"));
        assertThat(count("SELECT count(*) FROM job")).isZero();
    }

    @Test
    void twoIntegersBeyondTwoToTheFiftyThirdNoLongerReplayAsOneJob() {
        createJob(alice, "k", "{\"input\":{\"n\":9007199254740992}}").then().statusCode(201);
        createJob(alice, "k", "{\"input\":{\"n\":9007199254740993}}")
                .then()
                .statusCode(400)
                .body("code", equalTo("not-i-json"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"input\":{\"prompt\":\"\\ud800\"}}", "{\"input\":{\"\\udc00x\":\"p\"}}"})
    void loneSurrogatesAreRefusedWithNotIJsonInsteadOfBecomingQuestionMarks(String body) {
        createJob(alice, "k", body)
                .then()
                .statusCode(400)
                .body("code", equalTo("not-i-json"))
                .body("detail", containsString("surrogate"));
        // A literal '?' is a different input and is accepted.
        createJob(alice, "k2", "{\"input\":{\"prompt\":\"?\"}}").then().statusCode(201);
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
    }

    @Test
    void aSurrogatePairIsOneCharacterAndIsKept() {
        createJob(alice, "k", "{\"input\":{\"prompt\":\"\\ud83d\\ude00\"}}")
                .then()
                .statusCode(201)
                .body("input.prompt", equalTo("😀"));
    }

    @Test
    void repeatedMemberNamesAreRefused() {
        createJob(alice, "k", "{\"input\":{\"a\":1,\"a\":2}}")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"))
                .body("detail", containsString("Duplicate"));
    }

    /** JDK 17's Double.toString writes these differently from RFC 8785; stored and digested as the RFC says. */
    @Test
    void numbersAreStoredInTheirEcmaScriptFormOnEveryJdk() {
        createJob(alice, "k", "{\"input\":{\"n\":[1e23,5e-324,2e23,1.50,1E2]}}")
                .then()
                .statusCode(201);
        assertThat(text("SELECT input FROM job")).isEqualTo("{\"n\":[1e+23,5e-324,2e+23,1.5,100]}");
        // The same numbers written another way are the same request.
        createJob(alice, "k", "{ \"input\" : { \"n\" : [ 10e22, 0.5e-323, 2E+23, 1.5, 100 ] } }")
                .then()
                .statusCode(200)
                .header("Idempotent-Replayed", "true");
    }

    /** The digest of the whole body, computed here by hand as RFC 8785 and SHA-256 say. */
    @Test
    void theInputDigestIsTheSha256OfTheRfc8785Bytes() throws Exception {
        String digest = createJob(
                        alice, "k", "{\"provider\":\"fake-a\", \"input\":{\"n\":1e23,\"€\":\"x\",\"a\":true}}")
                .then()
                .statusCode(201)
                .extract()
                .path("inputDigest");
        String canonical = "{\"input\":{\"a\":true,\"n\":1e+23,\"€\":\"x\"},\"provider\":\"fake-a\"}";
        byte[] sha =
                java.security.MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
        assertThat(digest).isEqualTo("sha256:" + java.util.HexFormat.of().formatHex(sha));
    }
}
