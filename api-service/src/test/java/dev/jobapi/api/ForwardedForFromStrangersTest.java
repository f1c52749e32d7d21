package dev.jobapi.api;

import static io.restassured.RestAssured.given;

import dev.jobapi.api.contract.OutsideTheContract;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
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
 * Without a proxy the deployment trusts, {@code X-Forwarded-For} names no client: every body in
 * flight counts for the peer that sent it, whatever address each claims. The bodies' deadline is
 * long here so that the slow uploads are still held whenever the probe runs, however loaded the
 * machine: the bound is met by counting, not by a race with the deadline.
 */
@QuarkusTest
@TestProfile(ForwardedForFromStrangersTest.NoTrustedProxy.class)
@OutsideTheContract("slow uploads on raw connections")
class ForwardedForFromStrangersTest extends ApiTestSupport {

    /** No trusted proxy (the default), four bodies per client, a minute for each body. */
    public static class NoTrustedProxy implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jobapi.intake.max-uploads-per-client", "4", "jobapi.intake.body-timeout", "60s");
        }
    }

    @Test
    void aForwardedForHeaderIsIgnoredUnlessTheDeploymentTrustsTheProxy() throws IOException {
        String alice = Tokens.user("alice");
        List<Socket> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                // Each upload claims another client; none is trusted to say so, so all count for this peer.
                Socket socket = new Socket("127.0.0.1", io.restassured.RestAssured.port);
                slow.add(socket);
                String head = "POST /jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                        + "Authorization: Bearer " + alice + "\r\nIdempotency-Key: f-" + i
                        + "\r\nX-Forwarded-For: 203.0.113." + i + "\r\nContent-Length: 1000\r\n\r\n{\"in";
                socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
            }
            // The uploads reach the guard asynchronously; once all four are counted, this is refused.
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> given().header("Authorization", "Bearer " + alice)
                                    .contentType("application/json")
                                    .header("Idempotency-Key", "spoofed")
                                    .header("X-Forwarded-For", "198.51.100.1")
                                    .body(JOB_BODY)
                                    .post("/jobs")
                                    .statusCode()
                            == 429);
        } finally {
            for (Socket socket : slow) {
                socket.close();
            }
        }
    }
}
