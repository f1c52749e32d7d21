package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

/**
 * RS256 bearer tokens signed with the development key, as {@code bin/jobctl token} mints them: issuer
 * jobapi-dev, audience jobapi, a subject, groups as an array, iat, and the longest lifetime the API
 * accepts (twelve hours).
 */
final class DevTokens {

    private static final String ISSUER = "jobapi-dev";
    private static final String AUDIENCE = "jobapi";
    private static final long LIFETIME_SECONDS = 43_200;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Base64.Encoder B64URL = Base64.getUrlEncoder().withoutPadding();

    private final PrivateKey key;

    private DevTokens(PrivateKey key) {
        this.key = key;
    }

    /** Reads a PKCS#8 PEM private key ({@code -----BEGIN PRIVATE KEY-----}). */
    static DevTokens fromPem(Path pem) throws IOException, GeneralSecurityException {
        String base64 = Files.readString(pem)
                .replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "")
                .replaceAll("\\s", "");
        PrivateKey key = KeyFactory.getInstance("RSA")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
        return new DevTokens(key);
    }

    /** A token for {@code subject} with the given groups, valid for twelve hours: longer than any soak. */
    String mint(String subject, List<String> groups) {
        ObjectNode header =
                JSON.createObjectNode().put("alg", "RS256").put("typ", "JWT").put("kid", ISSUER);
        long now = Instant.now().getEpochSecond();
        ObjectNode claims = JSON.createObjectNode()
                .put("iss", ISSUER)
                .put("aud", AUDIENCE)
                .put("sub", subject)
                .put("upn", subject)
                .put("iat", now)
                .put("exp", now + LIFETIME_SECONDS)
                .put("jti", UUID.randomUUID().toString());
        groups.forEach(claims.putArray("groups")::add);
        String input = encode(header) + "." + encode(claims);
        try {
            Signature signature = Signature.getInstance("SHA256withRSA");
            signature.initSign(key);
            signature.update(input.getBytes(StandardCharsets.US_ASCII));
            return input + "." + B64URL.encodeToString(signature.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Cannot sign a development token", e);
        }
    }

    private static String encode(ObjectNode node) {
        return B64URL.encodeToString(node.toString().getBytes(StandardCharsets.UTF_8));
    }
}
