package dev.jobapi.api.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.jobapi.api.webhook.StandardWebhooksVerifier.VerificationFailed;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class StandardWebhooksVerifierTest {

    // The message of the specification's "Signature scheme" and "Webhook headers" examples. The specification does
    // not publish the secret behind its example signature, so this test signs the message with its own key.
    private static final String ID = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
    private static final String TIMESTAMP = "1674087231";
    private static final byte[] BODY =
            "{\"type\":\"contact.created\",\"timestamp\":\"2022-11-03T20:26:10.344522Z\",\"data\":{\"id\":\"1f81eb52-5198-4599-803e-771906343485\"}}"
                    .getBytes(StandardCharsets.UTF_8);
    // The asymmetric entry of the specification's example header.
    private static final String SPEC_V1A =
            "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==";

    private static final byte[] KEY = bytes(32, 1);
    private static final byte[] OTHER_KEY = bytes(32, 101);
    private static final Clock AT_TIMESTAMP = clockAt(Long.parseLong(TIMESTAMP));

    private final StandardWebhooksVerifier verifier = new StandardWebhooksVerifier(serialized(KEY), AT_TIMESTAMP);

    @Test
    void reproducesTheStandardWebhooksReferenceVector() {
        // The sign test vector of the reference libraries (standard-webhooks/standard-webhooks, e.g.
        // libraries/python/tests/test_webhooks.py), recomputed by hand with openssl when this test was written.
        String timestamp = "1614265330";
        StandardWebhooksVerifier reference = new StandardWebhooksVerifier(
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", clockAt(Long.parseLong(timestamp)));
        byte[] body = "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8);
        String signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

        assertThatCode(() -> reference.verify("msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp, signature, body))
                .doesNotThrowAnyException();
        assertThat(reference.matchingSignatures("msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp, signature, body))
                .isEqualTo(1);
    }

    @Test
    void acceptsTheSpecificationsExampleMessageSignedStepByStep() {
        String header = v1(KEY, ID, TIMESTAMP, BODY) + " " + SPEC_V1A;

        assertThatCode(() -> verifier.verify(ID, TIMESTAMP, header, BODY)).doesNotThrowAnyException();
        assertThat(verifier.matchingSignatures(ID, TIMESTAMP, header, BODY)).isEqualTo(1);
    }

    @Test
    void aSignatureMadeWithAnotherSecretFails() {
        String header = v1(OTHER_KEY, ID, TIMESTAMP, BODY);

        assertThat(verifier.matchingSignatures(ID, TIMESTAMP, header, BODY)).isZero();
        assertThatThrownBy(() -> verifier.verify(ID, TIMESTAMP, header, BODY))
                .isInstanceOf(VerificationFailed.class)
                .hasMessageContaining("no v1 signature");
    }

    @Test
    void aModifiedBodyFails() {
        String header = v1(KEY, ID, TIMESTAMP, BODY);
        byte[] modified = BODY.clone();
        modified[modified.length - 3] ^= 1;

        assertThat(verifier.matchingSignatures(ID, TIMESTAMP, header, modified)).isZero();
        assertThatThrownBy(() -> verifier.verify(ID, TIMESTAMP, header, modified))
                .isInstanceOf(VerificationFailed.class)
                .hasMessageContaining("no v1 signature");
    }

    @Test
    void aTimestampMoreThanFiveMinutesFromNowFailsThoughItsSignatureMatches() {
        long signedAt = Long.parseLong(TIMESTAMP);
        String header = v1(KEY, ID, TIMESTAMP, BODY);

        for (long now : new long[] {signedAt + 301, signedAt - 301}) {
            StandardWebhooksVerifier later = new StandardWebhooksVerifier(serialized(KEY), clockAt(now));
            assertThat(later.matchingSignatures(ID, TIMESTAMP, header, BODY)).isEqualTo(1);
            assertThatThrownBy(() -> later.verify(ID, TIMESTAMP, header, BODY))
                    .isInstanceOf(VerificationFailed.class)
                    .hasMessageContaining("tolerance");
        }
        for (long now : new long[] {signedAt + 300, signedAt - 300}) {
            StandardWebhooksVerifier within = new StandardWebhooksVerifier(serialized(KEY), clockAt(now));
            assertThatCode(() -> within.verify(ID, TIMESTAMP, header, BODY)).doesNotThrowAnyException();
        }
    }

    @Test
    void anyMatchingV1SignatureOfTheListVerifiesAndEachIsCounted() {
        String other = v1(OTHER_KEY, ID, TIMESTAMP, BODY);
        String mine = v1(KEY, ID, TIMESTAMP, BODY);

        assertThatCode(() -> verifier.verify(ID, TIMESTAMP, other + " " + mine, BODY))
                .doesNotThrowAnyException();
        assertThat(verifier.matchingSignatures(ID, TIMESTAMP, other + " " + mine, BODY))
                .isEqualTo(1);
        assertThat(verifier.matchingSignatures(ID, TIMESTAMP, mine + " " + other + " " + mine, BODY))
                .isEqualTo(2);
        assertThat(verifier.matchingSignatures(ID, TIMESTAMP, other + " " + other, BODY))
                .isZero();
    }

    @Test
    void aV1aEntryIsIgnoredEvenWhenItCarriesTheV1Signature() {
        String asV1a = "v1a," + v1(KEY, ID, TIMESTAMP, BODY).substring("v1,".length());

        assertThat(verifier.matchingSignatures(ID, TIMESTAMP, asV1a, BODY)).isZero();
        assertThatThrownBy(() -> verifier.verify(ID, TIMESTAMP, asV1a + " " + SPEC_V1A, BODY))
                .isInstanceOf(VerificationFailed.class)
                .hasMessageContaining("no v1 signature");
    }

    @Test
    void aMissingHeaderOrADotInTheIdOrTimestampFails() {
        String header = v1(KEY, ID, TIMESTAMP, BODY);

        assertThatThrownBy(() -> verifier.verify(null, TIMESTAMP, header, BODY))
                .isInstanceOf(VerificationFailed.class)
                .hasMessageContaining("webhook-id header is missing");
        assertThatThrownBy(() -> verifier.verify(ID, "", header, BODY))
                .isInstanceOf(VerificationFailed.class)
                .hasMessageContaining("webhook-timestamp header is missing");
        assertThatThrownBy(() -> verifier.verify(ID, TIMESTAMP, null, BODY))
                .isInstanceOf(VerificationFailed.class)
                .hasMessageContaining("webhook-signature header is missing");

        // "a.b" + "." + "c" signs the same content as "a" + "." + "b.c": the specification forbids the '.'.
        String dottedId = "msg.1";
        String dottedTimestamp = TIMESTAMP + ".0";
        assertThatThrownBy(() -> verifier.verify(dottedId, TIMESTAMP, v1(KEY, dottedId, TIMESTAMP, BODY), BODY))
                .isInstanceOf(VerificationFailed.class)
                .hasMessageContaining("contains a '.'");
        assertThatThrownBy(() -> verifier.verify(ID, dottedTimestamp, v1(KEY, ID, dottedTimestamp, BODY), BODY))
                .isInstanceOf(VerificationFailed.class)
                .hasMessageContaining("not integer unix seconds");
    }

    @Test
    void theSecretIsWhsecAndTheBase64OfTwentyFourToSixtyFourBytes() {
        assertThatCode(() -> new StandardWebhooksVerifier(serialized(bytes(24, 0))))
                .doesNotThrowAnyException();
        assertThatCode(() -> new StandardWebhooksVerifier(serialized(bytes(64, 0))))
                .doesNotThrowAnyException();
        for (String secret : new String[] {
            Base64.getEncoder().encodeToString(KEY),
            "whsec_not base64!",
            serialized(bytes(23, 0)),
            serialized(bytes(65, 0)),
            null
        }) {
            assertThatThrownBy(() -> new StandardWebhooksVerifier(secret))
                    .as(secret)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    /** {@code v1,<signature>} computed with the JDK's HMAC-SHA256 fed one part of the signed content at a time. */
    private static String v1(byte[] key, String id, String timestamp, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(id.getBytes(StandardCharsets.US_ASCII));
            mac.update((byte) '.');
            mac.update(timestamp.getBytes(StandardCharsets.US_ASCII));
            mac.update((byte) '.');
            mac.update(body);
            return "v1," + Base64.getEncoder().encodeToString(mac.doFinal());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static String serialized(byte[] key) {
        return "whsec_" + Base64.getEncoder().encodeToString(key);
    }

    private static byte[] bytes(int length, int first) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (first + i);
        }
        return bytes;
    }

    private static Clock clockAt(long epochSecond) {
        return Clock.fixed(Instant.ofEpochSecond(epochSecond), ZoneOffset.UTC);
    }
}
