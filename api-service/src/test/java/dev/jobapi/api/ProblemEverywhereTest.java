package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import dev.jobapi.api.contract.OutsideTheContract;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * RFC 9457 everywhere: what the HTTP layer refuses before any resource runs (413, 414, 431) and
 * what a resource refuses answer problem+json, and every problem type is an absolute URI whose page
 * this API serves.
 */
@QuarkusTest
class ProblemEverywhereTest extends ApiTestSupport {

    private final String alice = Tokens.user("alice");

    /** Sends raw bytes and reads everything the server answers until it closes the connection. */
    private static String exchange(String head, byte[] body, int repeat) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", RestAssured.port)) {
            socket.setSoTimeout(15_000);
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.ISO_8859_1));
            try {
                for (int i = 0; i < repeat; i++) {
                    out.write(body);
                }
                out.flush();
            } catch (IOException closedByTheServer) {
                // Expected when the server answers before the whole body is sent, then closes.
            }
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static void assertProblem(String answer, int status, String code) {
        assertThat(answer)
                .startsWith("HTTP/1.1 " + status)
                .containsIgnoringCase("content-type: application/problem+json")
                .contains("\"code\":\"" + code + "\"")
                .contains("\"status\":" + status);
    }

    private static byte[] chunkOfA(int size) {
        byte[] chunk = new byte[size];
        java.util.Arrays.fill(chunk, (byte) 'a');
        return chunk;
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aDeclaredBodyOverTwoMegabytesIsAProblem(boolean withToken) throws IOException {
        String head = "POST /jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + (withToken ? "Authorization: Bearer " + alice + "\r\n" : "")
                + "Idempotency-Key: big\r\nContent-Length: 3000000\r\n\r\n";
        assertProblem(exchange(head, chunkOfA(64 * 1024), 4), 413, "payload-too-large");
    }

    @Test
    void aDeclaredBodyOverTwoMegabytesOnAGetIsAProblem() throws IOException {
        String head = "GET /jobs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + alice
                + "\r\nContent-Length: 3000000\r\n\r\n";
        assertProblem(exchange(head, chunkOfA(64 * 1024), 4), 413, "payload-too-large");
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aChunkedBodyOverTwoMegabytesIsAProblem(boolean withToken) throws IOException {
        String head = "POST /jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + (withToken ? "Authorization: Bearer " + alice + "\r\n" : "")
                + "Idempotency-Key: big\r\nTransfer-Encoding: chunked\r\n\r\n";
        int size = 64 * 1024;
        byte[] chunk =
                (Integer.toHexString(size) + "\r\n" + "a".repeat(size) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        String answer = exchange(head, chunk, 40);
        if (withToken) {
            assertProblem(answer, 413, "payload-too-large");
        } else {
            // Without a token the body is refused unread: 401 before it could be too large.
            assertProblem(answer, 401, "unauthenticated");
        }
    }

    @Test
    void aRequestLineOverTheLimitIs414() throws IOException {
        String head =
                "GET /jobs?state=" + "a".repeat(5000) + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
        assertProblem(exchange(head, new byte[0], 0), 414, "uri-too-long");
    }

    @Test
    void headersOverTheLimitAre431() throws IOException {
        String head = "GET /jobs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Padding: " + "a".repeat(21_000)
                + "\r\n\r\n";
        assertProblem(exchange(head, new byte[0], 0), 431, "headers-too-large");
    }

    @ParameterizedTest
    @ValueSource(strings = {"limit=abc", "limit=-1", "limit=101", "state=nope", "cursor=%25%25"})
    @OutsideTheContract("query values out of the document's bounds and enum, to see the api refuse them too")
    void aBadQueryParameterIsInvalidQueryNotABodyProblemOrA404(String query) {
        as(alice)
                .get("/jobs?" + query)
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("code", equalTo("invalid-query"))
                .body("title", equalTo("A query parameter is not valid"));
    }

    @Test
    void problemTypesAreAbsoluteUrisWhosePagesThisApiServes() {
        String type = as(alice).get("/jobs?limit=abc").path("type");
        URI uri = URI.create(type);
        assertThat(uri.isAbsolute()).isTrue();
        assertThat(uri.getPath()).isEqualTo("/problems/invalid-query");
        // The page needs no token and names the problem.
        RestAssured.given()
                .get(uri.getPath())
                .then()
                .statusCode(200)
                .contentType("text/html")
                .body(containsString("A query parameter is not valid"))
                .body(containsString("invalid-query"))
                .body(containsString("400"));
        RestAssured.given().get("/problems").then().statusCode(200).body(containsString("/problems/not-i-json"));
        RestAssured.given()
                .get("/problems/no-such-code")
                .then()
                .statusCode(404)
                .contentType("application/problem+json")
                .body("code", equalTo("not-found"));
    }

    @Test
    void everyProblemOfTheCatalogueHasAPage() {
        for (String code : RestAssured.given().get("/problems").htmlPath().getList("html.body.ul.li.a", String.class)) {
            RestAssured.given().get("/problems/" + code).then().statusCode(200);
        }
    }
}
