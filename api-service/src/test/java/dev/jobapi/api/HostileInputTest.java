package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Generated bad requests at every endpoint that reads a body, a path id or a query parameter: no
 * 5xx, every refusal is problem+json with a code, no row written for a refused request, and the
 * service healthy afterwards. Hostile text that is valid input is stored verbatim and comes back
 * escaped.
 */
@QuarkusTest
class HostileInputTest extends ApiTestSupport {

    private static final long SEED = 20261129L;
    private static final int REQUESTS = 2_000;

    /** Keys that must be refused: empty, too long, control and non-ASCII characters. */
    private static final List<String> BAD_KEYS = List.of("", "x".repeat(300), "tab\there", "del\u007fkey", "cl\u00e9");

    /** Path ids and query values that are not what the endpoint reads. */
    private static final List<String> BAD_VALUES = List.of(
            "not-a-uuid", "%00", "..%2F..%2Fetc", "'%20OR%201=1%20--", "%3Cscript%3E", "-1", "99999999999999999999");

    /** Bodies that are wrong in every way a client can get a body wrong. */
    private static byte[] hostileBody(Random random) {
        String valid = JOB_BODY;
        return switch (random.nextInt(10)) {
            case 0 -> utf8(valid.substring(0, random.nextInt(valid.length())));
            case 1 -> utf8("{\"input\":" + "[".repeat(50 + random.nextInt(500)) + "}"); // unbalanced, deep
            case 2 -> new byte[] {'{', '"', 'i', '"', ':', (byte) 0xC3, (byte) 0x28, '}'}; // invalid UTF-8
            case 3 -> utf8("{\"input\":" + randomScalar(random) + "}");
            case 4 -> utf8("{\"input\":{},\"provider\":" + (random.nextBoolean() ? "1" : "[\"fake-a\"]") + "}");
            case 5 -> utf8("{\"input\":{},\"" + randomWord(random) + "\":true}");
            case 6 -> randomBytes(random);
            case 7 -> utf8("{\"input\":{\"a\":1},\"input\":{\"a\":2}"); // truncated after a duplicate key
            case 8 -> utf8("null");
                // Over the 1 MiB limit; rarer than the rest, because each costs a megabyte on the wire.
            default -> random.nextInt(4) == 0
                    ? utf8("{\"input\":{\"prompt\":\"" + "x".repeat(1_048_577) + "\"}}")
                    : utf8("{\"ids\":" + randomScalar(random) + ",\"all\":\"" + randomWord(random) + "\"}");
        };
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String randomScalar(Random random) {
        return List.of("1", "\"text\"", "true", "null", "1e999", "-0").get(random.nextInt(6));
    }

    private static String randomWord(Random random) {
        StringBuilder word = new StringBuilder();
        for (int i = 0; i < 1 + random.nextInt(12); i++) {
            word.append((char) ('a' + random.nextInt(26)));
        }
        return word.toString();
    }

    private static byte[] randomBytes(Random random) {
        byte[] bytes = new byte[1 + random.nextInt(200)];
        random.nextBytes(bytes);
        return bytes;
    }

    @Test
    void generatedBadRequestsNeverCauseA5xxOrWriteARow() {
        Random random = new Random(SEED);
        String alice = Tokens.user("alice");
        String jobId = createJob(alice, "real", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            byte[] body = hostileBody(random);
            String key = random.nextInt(10) == 0 ? BAD_KEYS.get(random.nextInt(BAD_KEYS.size())) : "hostile-" + i;
            String bad = BAD_VALUES.get(random.nextInt(BAD_VALUES.size()));
            String otto = Tokens.of("otto", "operator");
            Response response =
                    switch (random.nextInt(12)) {
                        case 0, 1, 2 -> as(alice)
                                .contentType("application/json")
                                .header("Idempotency-Key", key)
                                .body(body)
                                .post("/jobs");
                        case 3, 4 -> as(alice)
                                .contentType("application/json")
                                .header("Idempotency-Key", key)
                                .body(body)
                                .post("/jobs/" + jobId + "/attempts");
                        case 5 -> as(otto).contentType("application/json")
                                .body(body)
                                .put("/admin/fallback");
                        case 6 -> as(otto).contentType("application/json")
                                .body(body)
                                .post("/admin/dlq/replay");
                        case 7 -> as(otto).contentType("application/json")
                                .body(body)
                                .post("/admin/attempts/" + (random.nextBoolean() ? bad : jobId) + "/resolve");
                            // Unsigned or wrongly signed: refused before the body is even parsed.
                        case 8 -> given().contentType("application/json")
                                .header("Jobapi-Signature", random.nextBoolean() ? "t=1,v1=00" : bad)
                                .body(body)
                                .post("/callbacks/" + (random.nextBoolean() ? "fake-a" : bad));
                        case 9 -> as(alice).urlEncodingEnabled(false).get("/jobs/" + bad + "/timeline");
                        case 10 -> as(alice)
                                .urlEncodingEnabled(false)
                                .get("/jobs?limit=" + bad + "&cursor=" + bad + "&state=" + bad);
                        default -> as(otto).urlEncodingEnabled(false)
                                .get(List.of("/admin/dlq?offset=", "/admin/audit?limit=", "/usage?from=")
                                                .get(random.nextInt(3))
                                        + bad);
                    };
            int status = response.statusCode();
            boolean problem =
                    response.contentType().startsWith("application/problem+json") && response.path("code") != null;
            if (status >= 500 || status < 400 || !problem) {
                failures.add("request " + i + " -> " + status + " " + response.contentType());
            }
        }
        assertThat(failures).isEmpty();
        // Only the one real job and its first attempt exist; nothing refused was written.
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(1);
        given().get("/q/health/ready").then().statusCode(200);
    }

    @Test
    void hostileTextThatIsValidInputIsStoredVerbatimAndReturnedEscaped() {
        String nasty = "'; DROP TABLE job; -- <script>alert(1)</script> \\u0000 \u2028 \" \\\\";
        String body = "{\"input\":{\"prompt\":" + com.fasterxml.jackson.databind.node.TextNode.valueOf(nasty) + "}}";
        String id = createJob(Tokens.user("alice"), "nasty", body)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        as(Tokens.user("alice")).get("/jobs/" + id).then().statusCode(200).body("input.prompt", equalTo(nasty));
        // In the JSON it comes back as a string, its quotes escaped: it never breaks out of the document.
        assertThat(as(Tokens.user("alice")).get("/jobs/" + id).asString()).contains("\\\"");
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
    }
}
