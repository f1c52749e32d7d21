package dev.jobapi.api.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.testing.HandClock;
import java.time.Duration;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.junit.jupiter.api.Test;

class VerifiedTokensTest {

    private final HandClock clock = new HandClock();
    private final VerifiedTokens verified = new VerifiedTokens(clock);

    @Test
    void aVerifiedTokenIsTrustedForAMinuteAtMost() {
        verified.remember("token", expiringIn(Duration.ofHours(1)));

        clock.advance(VerifiedTokens.TRUST.minusSeconds(1));
        assertThat(verified.find("token")).isPresent();
        clock.advance(Duration.ofSeconds(1));
        assertThat(verified.find("token")).isEmpty();
    }

    @Test
    void aTokenNearItsEndIsTrustedOnlyUntilItsExpiry() {
        verified.remember("token", expiringIn(Duration.ofSeconds(20)));

        clock.advance(Duration.ofSeconds(19));
        assertThat(verified.find("token")).isPresent();
        clock.advance(Duration.ofSeconds(1));
        assertThat(verified.find("token")).isEmpty();
    }

    @Test
    void aTokenPastItsExpiryOrWithoutOneIsNeverRemembered() {
        // The verifier accepts a token up to its clock skew past exp; this store never does.
        verified.remember("expired", expiringIn(Duration.ofSeconds(-1)));
        verified.remember("no exp", new ExpiringToken(0));

        assertThat(verified.find("expired")).isEmpty();
        assertThat(verified.find("no exp")).isEmpty();
    }

    @Test
    void onlyTheExactTokenIsKnown() {
        verified.remember("header.payload.signature", expiringIn(Duration.ofHours(1)));

        assertThat(verified.find("header.payload.signaturf")).isEmpty();
        assertThat(verified.find("header.payload.signature")).isPresent();
    }

    @Test
    void onceFullOfLiveTokensANewOneIsNotRememberedAndExpiredOnesMakeRoom() {
        for (int i = 0; i < VerifiedTokens.CAPACITY; i++) {
            verified.remember("token-" + i, expiringIn(Duration.ofHours(1)));
        }
        verified.remember("one too many", expiringIn(Duration.ofHours(1)));
        assertThat(verified.find("one too many")).isEmpty();

        clock.advance(VerifiedTokens.TRUST);
        verified.remember("after the others' trust ended", expiringIn(Duration.ofHours(1)));
        assertThat(verified.find("after the others' trust ended")).isPresent();
    }

    @Test
    void aTokenMeetsTheRulesOnlyOnceNotedAndWhileItsVerificationIsTrusted() {
        verified.remember("token", expiringIn(Duration.ofHours(1)));
        assertThat(verified.metTheRules("token")).isFalse();

        verified.noteMetTheRules("token");
        assertThat(verified.metTheRules("token")).isTrue();
        assertThat(verified.find("token")).isPresent();

        clock.advance(VerifiedTokens.TRUST);
        assertThat(verified.metTheRules("token")).isFalse();
        verified.remember("token", expiringIn(Duration.ofHours(1)));
        assertThat(verified.metTheRules("token"))
                .as("verified again, held to the rules again")
                .isFalse();
    }

    @Test
    void aTokenNeverVerifiedIsNeverNotedAsMeetingTheRules() {
        verified.noteMetTheRules("stranger");
        assertThat(verified.metTheRules("stranger")).isFalse();

        verified.remember("stranger", expiringIn(Duration.ofHours(1)));
        assertThat(verified.metTheRules("stranger")).isFalse();
    }

    private JsonWebToken expiringIn(Duration fromNow) {
        return new ExpiringToken(clock.instant().plus(fromNow).getEpochSecond());
    }
}
