package dev.jobapi.api;

import static io.restassured.RestAssured.given;

import dev.jobapi.api.contract.OutsideTheContract;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Behind a proxy the deployment names ({@code jobapi.intake.trusted-proxies}), the per-client bound
 * on bodies in flight counts the clients the proxy forwards, not the proxy: one client at its bound
 * does not stop another behind the same proxy.
 */
@QuarkusTest
@TestProfile(TrustedProxyTest.BehindAProxy.class)
@OutsideTheContract("slow uploads on raw connections")
class TrustedProxyTest extends ApiTestSupport {

    /** Loopback, where the tests connect from, is the trusted proxy; four bodies per client. */
    public static class BehindAProxy implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "jobapi.intake.trusted-proxies", "10.0.0.0/8,127.0.0.1",
                    "jobapi.intake.max-uploads-per-client", "4",
                    // Long enough that the slow uploads are held whenever the probe runs.
                    "jobapi.intake.body-timeout", "60s");
        }
    }

    private static Socket slowUpload(String token, String key, String forwardedFor) throws IOException {
        Socket socket = new Socket("127.0.0.1", io.restassured.RestAssured.port);
        String head =
                "POST /jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer "
                        + token + "\r\nIdempotency-Key: " + key + "\r\nX-Forwarded-For: " + forwardedFor
                        + "\r\nContent-Length: 1000\r\n\r\n{\"in";
        socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return socket;
    }

    private static Response post(String token, String key, String forwardedFor) {
        return given().header("Authorization", "Bearer " + token)
                .contentType("application/json")
                .header("Idempotency-Key", key)
                .header("X-Forwarded-For", forwardedFor)
                .body(JOB_BODY)
                .post("/jobs");
    }

    @Test
    void eachClientBehindATrustedProxyHasItsOwnBoundAndTheProxyChainIsWalkedFromTheRight() throws IOException {
        String alice = Tokens.user("alice");
        // A first request, so the bound below is met by an application that has served one already
        // (a freshly started one may take longer than the wait for its first answer).
        post(alice, "warm-up", "192.0.2.1").then().statusCode(201);
        List<Socket> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                // The client claims an address; the trusted proxies (10.1.2.3, then loopback) append theirs.
                slow.add(slowUpload(alice, "slow-" + i, "198.51.100.9, 203.0.113.7, 10.1.2.3"));
            }
            // 203.0.113.7 is at its bound: the right-most address no trusted proxy wrote.
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> post(alice, "same-client", "203.0.113.7").statusCode() == 429);
            // Another client behind the same proxies is served.
            post(alice, "other-client", "203.0.113.8, 10.9.9.9").then().statusCode(201);
        } finally {
            for (Socket socket : slow) {
                socket.close();
            }
        }
    }
}
