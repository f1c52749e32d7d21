package dev.jobapi.api.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.testing.HandClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** A request asks the claim rules three times; a verified token that met them is read once. */
class TokenRulesTest {

    private final HandClock clock = new HandClock();
    private final VerifiedTokens verified = new VerifiedTokens(clock);
    private final CountingMapper mapper = new CountingMapper();
    private final TokenRules rules = new TokenRules(mapper, verified, clock, 30);

    @Test
    void aVerifiedTokenThatMetTheRulesIsNotReadAgainWhileItsVerificationIsTrusted() {
        String token = token("{\"sub\":\"alice\",\"groups\":[\"user\"],\"iat\":" + now() + "}");
        verified.remember(token, expiringInAnHour());

        rules.check(token);
        rules.check(token);
        rules.check(token);
        assertThat(mapper.reads).isEqualTo(1);

        clock.advance(VerifiedTokens.TRUST);
        verified.remember(token, expiringInAnHour());
        rules.check(token);
        assertThat(mapper.reads).as("verified again, read again").isEqualTo(2);
    }

    @Test
    void aTokenThatBreaksARuleIsReadAndRefusedEveryTime() {
        String token = token("{\"sub\":\"alice\",\"groups\":\"user reviewer\",\"iat\":" + now() + "}");
        verified.remember(token, expiringInAnHour());

        assertThatThrownBy(() -> rules.check(token)).isInstanceOf(TokenRefusedException.class);
        assertThatThrownBy(() -> rules.check(token)).isInstanceOf(TokenRefusedException.class);
        assertThat(mapper.reads).isEqualTo(2);
    }

    @Test
    void aTokenTheParserDoesNotHoldIsReadEveryTime() {
        String token = token("{\"sub\":\"alice\",\"iat\":" + now() + "}");

        rules.check(token);
        rules.check(token);
        assertThat(mapper.reads).isEqualTo(2);
    }

    private long now() {
        return clock.instant().getEpochSecond();
    }

    private ExpiringToken expiringInAnHour() {
        return new ExpiringToken(clock.instant().plus(Duration.ofHours(1)).getEpochSecond());
    }

    /** A token as sent: only the claims part is read by the rules (the signature is the parser's). */
    private static String token(String claims) {
        Base64.Encoder base64 = Base64.getUrlEncoder().withoutPadding();
        return base64.encodeToString("{\"alg\":\"RS256\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + base64.encodeToString(claims.getBytes(StandardCharsets.UTF_8)) + ".signature";
    }

    /** Counts the rules' reads of raw claims. */
    private static final class CountingMapper extends ObjectMapper {
        int reads;

        @Override
        public JsonNode readTree(byte[] content) throws IOException {
            reads++;
            return super.readTree(content);
        }
    }
}
