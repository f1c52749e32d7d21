package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import dev.jobapi.api.contract.OutsideTheContract;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
@OutsideTheContract("hostile requests, generated and handwritten, are the point of this class")
class HostileInputTest extends ApiTestSupport {

    private static final long SEED = 20261129L;
    private static final int REQUESTS = 10_000;

    /** Keys that must be refused: empty, too long, control and non-ASCII characters. */
    private static final List<String> BAD_KEYS = List.of("", "x".repeat(300), "tab\there", "del\u007fkey", "cl\u00e9");

    /** Path ids and query values that are not what the endpoint reads. */
    private static final List<String> BAD_VALUES = List.of(
            "not-a-uuid",
            "%00",
            "..%2F..%2Fetc",
            "'%20OR%201=1%20--",
            "%3Cscript%3E",
            "-1",
            "99999999999999999999",
            "abc",
            "1e400",
            "0x10",
            "%0Aforged",
            "-4714-01-01",
            "%2B10000-01-01",
            "0000-01-01",
            "1999-12-31",
            "2026-02-30",
            // Well-formed cursors whose dates no timestamp column holds (a 500 before).
            "KzI5NDI3Ny0wMS0wMVQwMDowMDowMFp8MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAw",
            "LTEwMDAwMDAwMDAtMDEtMDFUMDA6MDA6MDBafDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMA");

    /** Query strings with at least one unparseable or out-of-range value: every one must be a 400. */
    private static String badQuery(Random random, String bad) {
        return switch (random.nextInt(9)) {
            case 0 -> "/jobs?limit=" + bad;
            case 1 -> "/jobs?state=" + bad;
            case 2 -> "/jobs?cursor=" + bad;
            case 3 -> "/admin/dlq?offset=" + bad;
            case 4 -> "/admin/dlq?limit=" + bad;
            case 5 -> "/admin/audit?limit=" + bad;
            case 6 -> "/admin/audit?before=" + bad;
            case 7 -> "/usage?from=" + bad + "&to=" + bad;
            default -> random.nextBoolean()
                    ? "/usage?to=" + bad
                    : "/usage?owner="
                            + List.of("%00", "%0Aforged", "%20", "%1B%5B31m").get(random.nextInt(4));
        };
    }

    /** Text with a control character a person never types into a reason or a git name. */
    private static String controlText(Random random) {
        char control = List.of('\u0000', '\u0001', '\u001b', '\u007f', '\u0085').get(random.nextInt(5));
        return "reason " + control + " forged";
    }

    /** Numbers no double holds: canonical JSON cannot write them. */
    private static String hugeNumber(Random random) {
        return List.of("1e400", "-1e400", "1" + "0".repeat(400), "2.5E+999").get(random.nextInt(4));
    }

    /** Bodies whose shape is right but one value is hostile: each must be refused with a 400. */
    private static byte[] hostileValueBody(Random random) {
        String text = com.fasterxml.jackson.databind.node.TextNode.valueOf(controlText(random))
                .toString();
        return switch (random.nextInt(8)) {
            case 0 -> utf8("{\"input\":{\"prompt\":\"p\",\"n\":" + hugeNumber(random) + "}}");
            case 1 -> utf8("{\"input\":{\"prompt\":\"p\\u0000q\"}}");
            case 2 -> utf8("{\"input\":{\"prompt\":\"p\",\"baseRef\":"
                    + List.of("\"main\\nrefs/heads/evil\"", "\"a..b\"", "\"-x\"", "\"HEAD~1\"", "\"x.lock\"", "12")
                            .get(random.nextInt(6))
                    + "}}");
            case 3 -> utf8("{\"input\":{\"prompt\":\"p\",\"repository\":"
                    + List.of("\"../etc\"", "\"a/b/c\"", "\".hidden\"", "\"x\\ny\"", "\"\"", "[]")
                            .get(random.nextInt(6))
                    + "}}");
            case 4 -> utf8("{\"provider\":\"fake-b\",\"supersede\":{\"reason\":" + text + "}}");
            case 5 -> utf8("{\"enabled\":" + random.nextBoolean() + ",\"reason\":" + text + "}");
            case 6 -> utf8("{\"fail\":true,\"reason\":" + text + "}");
            default -> utf8("{\"input\":{\"a\":[" + "[],".repeat(10_000 + random.nextInt(5_000)) + "[]]}}");
        };
    }

    /**
     * Bodies a lenient reader takes and a strict one refuses: right in shape, but with content after
     * the document, a scalar of another type than the field's, or bytes that are not well-formed UTF-8.
     */
    private static byte[] lenientlyReadBody(Random random) {
        return switch (random.nextInt(6)) {
            case 0 -> utf8(
                    JOB_BODY + List.of(" x", "{}", " []", "\n\"y\"", " 1").get(random.nextInt(5)));
            case 1 -> utf8(List.of(
                            "{\"input\":{\"prompt\":\"p\"},\"provider\":true}",
                            "{\"input\":{\"prompt\":\"p\"},\"fallback\":\"fake-b\"}",
                            "{\"input\":{\"prompt\":\"p\"},\"provider\":12}")
                    .get(random.nextInt(3)));
            case 2 -> utf8(List.of(
                            "{\"enabled\":\"false\",\"reason\":\"r\"}",
                            "{\"enabled\":0,\"reason\":\"r\"}",
                            "{\"fail\":\"true\",\"reason\":\"r\"}",
                            "{\"usage\":{\"promptTokens\":\"12\",\"completionTokens\":1.0},\"reason\":\"r\"}")
                    .get(random.nextInt(4)));
            case 3 -> utf8(List.of(
                            "{\"all\":\"true\"}",
                            "{\"all\":1}",
                            "{\"filter\":\"\"}",
                            "{\"filter\":[]}",
                            "{\"ids\":\"abc\"}",
                            "{\"filter\":{\"owner\":12}}")
                    .get(random.nextInt(6)));
            case 4 -> {
                // Overlong '/', an encoded surrogate, a lone continuation byte, a truncated sequence.
                byte[][] malformed = {
                    {(byte) 0xC0, (byte) 0xAF},
                    {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
                    {(byte) 0x80},
                    {(byte) 0xE2, (byte) 0x82}
                };
                byte[] bad = malformed[random.nextInt(malformed.length)];
                byte[] head = utf8("{\"input\":{\"prompt\":\"p");
                byte[] tail = utf8("\"}}");
                byte[] body = new byte[head.length + bad.length + tail.length];
                System.arraycopy(head, 0, body, 0, head.length);
                System.arraycopy(bad, 0, body, head.length, bad.length);
                System.arraycopy(tail, 0, body, head.length + bad.length, tail.length);
                yield body;
            }
            default -> JOB_BODY.getBytes(random.nextBoolean() ? StandardCharsets.UTF_16 : StandardCharsets.UTF_16LE);
        };
    }

    /** Bodies that are wrong in every way a client can get a body wrong. */
    private static byte[] hostileBody(Random random) {
        String valid = JOB_BODY;
        return switch (random.nextInt(15)) {
            case 13, 14 -> lenientlyReadBody(random);
            case 10, 11, 12 -> hostileValueBody(random);
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

    private static String preview(byte[] bytes) {
        String text = new String(bytes, 0, Math.min(120, bytes.length), StandardCharsets.UTF_8);
        return text.replaceAll("\\p{Cntrl}", "?");
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
        String otto = Tokens.of("otto", "operator");
        String rita = Tokens.reviewer("rita");
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            byte[] body = hostileBody(random);
            String key = random.nextInt(10) == 0 ? BAD_KEYS.get(random.nextInt(BAD_KEYS.size())) : "hostile-" + i;
            String bad = BAD_VALUES.get(random.nextInt(BAD_VALUES.size()));
            boolean query = false;
            String[] sent = {"body " + preview(body)};
            Response response =
                    switch (random.nextInt(13)) {
                        case 0, 1, 2 -> as(alice)
                                .contentType("application/json")
                                .header("Idempotency-Key", key)
                                .body(body)
                                .post("/jobs");
                        case 3, 4 -> as(random.nextBoolean() ? alice : rita)
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
                        default -> {
                            query = true;
                            sent[0] = badQuery(random, bad);
                            yield as(otto).urlEncodingEnabled(false).get(sent[0]);
                        }
                    };
            int status = response.statusCode();
            boolean problem =
                    response.contentType().startsWith("application/problem+json") && response.path("code") != null;
            if (status >= 500 || status < 400 || !problem || (query && status != 400)) {
                failures.add(
                        "request " + i + " (" + sent[0] + ") -> " + status + " " + preview(response.asByteArray()));
            }
        }
        assertThat(failures).isEmpty();
        // Only the one real job and its first attempt exist; nothing refused was written.
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record")).isZero();
        management().get("/q/health/ready").then().statusCode(200);
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

    @Test
    void theReportedFiveHundredsAreNowFourHundreds() {
        String alice = Tokens.user("alice");
        String otto = Tokens.of("otto", "operator");
        String jobId = aliceJobWithFailedFirstAttempt();
        String attemptId = as(alice).get("/jobs/" + jobId).path("attempts[0].id");
        createJob(alice, "huge", "{\"input\":{\"n\":1e400}}")
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("range of a double"));
        requestAttempt(Tokens.reviewer("rita"), jobId, "nul", "{\"supersede\":{\"reason\":\"a\\u0000b\"}}")
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("NUL"));
        as(otto).contentType("application/json")
                .body("{\"enabled\":false,\"reason\":\"a\\u0000b\"}")
                .put("/admin/fallback")
                .then()
                .statusCode(400);
        // Other control characters are refused in reasons too: they would forge a terminal or a log.
        as(otto).contentType("application/json")
                .body("{\"enabled\":false,\"reason\":\"a\\u001b[31mb\"}")
                .put("/admin/fallback")
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("control characters"));
        as(otto).contentType("application/json")
                .body("{\"fail\":true,\"reason\":\"a\\u0000b\"}")
                .post("/admin/attempts/" + attemptId + "/resolve")
                .then()
                .statusCode(400);
        as(alice)
                .get("/usage?from=-4714-01-01&to=-4714-01-02")
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("YYYY-MM-DD"));
        as(alice)
                .get("/jobs?limit=abc")
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("detail", org.hamcrest.Matchers.containsString("'limit'"));
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record")).isZero();
    }

    @Test
    void aStrictReaderRefusesWhatALenientOneWouldTakeAndWritesNothing() throws Exception {
        String alice = Tokens.user("alice");
        String otto = Tokens.of("otto", "operator");
        String jobId = aliceJobWithFailedFirstAttempt();
        List<String> accepted = new ArrayList<>();
        Random random = new Random(SEED);
        for (int i = 0; i < 200; i++) {
            byte[] body = lenientlyReadBody(random);
            Response response =
                    switch (i % 4) {
                        case 0 -> as(alice)
                                .contentType("application/json")
                                .header("Idempotency-Key", "strict-" + i)
                                .body(body)
                                .post("/jobs");
                        case 1 -> as(otto).contentType("application/json")
                                .body(body)
                                .put("/admin/fallback");
                        case 2 -> as(otto).contentType("application/json")
                                .body(body)
                                .post("/admin/dlq/replay");
                        default -> as(alice)
                                .contentType("application/json")
                                .header("Idempotency-Key", "strict-" + i)
                                .body(body)
                                .post("/jobs/" + jobId + "/attempts");
                    };
            if (response.statusCode() != 400 || !response.contentType().startsWith("application/problem+json")) {
                accepted.add(preview(body) + " -> " + response.statusCode());
            }
        }
        // A JSON body sent as something else is refused as such, whatever the bytes.
        for (String type : List.of("text/plain", "application/xml", "application/octet-stream")) {
            Response response = as(alice)
                    .contentType(type)
                    .header("Idempotency-Key", "typed-" + type)
                    .body(utf8(JOB_BODY))
                    .post("/jobs");
            if (response.statusCode() != 415 || !"unsupported-media-type".equals(response.path("code"))) {
                accepted.add(type + " -> " + response.statusCode());
            }
        }
        // RestAssured always names a type; the JDK client sends none unless told.
        java.net.http.HttpResponse<String> untyped = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(io.restassured.RestAssured.baseURI
                                        + ":" + io.restassured.RestAssured.port + "/jobs"))
                                .header("Authorization", "Bearer " + alice)
                                .header("Idempotency-Key", "untyped")
                                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(JOB_BODY))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        if (untyped.statusCode() != 415) {
            accepted.add("no Content-Type -> " + untyped.statusCode());
        }

        assertThat(accepted).isEmpty();
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record")).isZero();
        assertThat(count("SELECT count(*) FROM fallback_switch WHERE enabled")).isEqualTo(1);
    }

    @Test
    void deadLetterReplayNamingANullOrBlankIdIsA400() {
        String otto = Tokens.of("otto", "operator");
        for (String body : List.of("{\"ids\":[null]}", "{\"ids\":[\" \"]}", "{\"ids\":[\"a\",null]}")) {
            as(otto).contentType(ContentType.JSON)
                    .body(body)
                    .post("/admin/dlq/replay")
                    .then()
                    .statusCode(400)
                    .contentType("application/problem+json")
                    .body("code", equalTo("invalid-request"));
        }
        assertThat(count("SELECT count(*) FROM audit_record")).isZero();
    }

    @Test
    void inputsPastTheElementOrSizeBoundAreRefusedAndStoreNothing() {
        String alice = Tokens.user("alice");
        // The reported heap exhaustion: about 900 KB of empty arrays in one input.
        String arrays = "{\"input\":{\"a\":[" + "[],".repeat(300_000) + "[]]}}";
        createJob(alice, "arrays", arrays)
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("more than 10000 JSON values"));
        // Long member names over many values: a JSON Pointer copied into every queued child cost
        // gigabytes before the count stopped it.
        String names = "{\"input\":{\"" + "n".repeat(45_000) + "\":{\"" + "m".repeat(45_000) + "\":["
                + "0,".repeat(400_000) + "0]}}}";
        createJob(alice, "long-names", names)
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("more than 10000 JSON values"));
        String large = "{\"input\":{\"prompt\":\"" + "x".repeat(600_000) + "\"}}";
        createJob(alice, "large", large)
                .then()
                .statusCode(413)
                .body("code", equalTo("payload-too-large"))
                .body("detail", org.hamcrest.Matchers.containsString("524288"));
        assertThat(count("SELECT count(*) FROM job")).isZero();
    }

    @Test
    void aPageOfJobsCarriesInputPreviewsNotTheStoredInputs() {
        String alice = Tokens.user("alice");
        String bulk = "y".repeat(400_000);
        for (int i = 0; i < 30; i++) {
            createJob(
                            alice,
                            "big-" + i,
                            "{\"input\":{\"prompt\":\"fix " + i + "\",\"context\":\"" + bulk
                                    + "\",\"repository\":\"demo\",\"baseRef\":\"main\"}}")
                    .then()
                    .statusCode(201);
        }
        Response page = as(alice).get("/jobs?limit=100");
        // 30 stored inputs of 400 KB; the page is a few kilobytes whatever they hold.
        assertThat(page.asByteArray().length).isLessThan(30 * 1024);
        page.then()
                .statusCode(200)
                .body("items.size()", equalTo(30))
                .body("items[0].input.prompt", equalTo("fix 29"))
                .body("items[0].input.baseRef", equalTo("main"))
                .body("items[0].inputBytes", org.hamcrest.Matchers.greaterThan(400_000));
        // The whole input is one GET away.
        String id = page.path("items[0].id");
        as(alice).get("/jobs/" + id).then().statusCode(200).body("input.context.length()", equalTo(400_000));
    }

    @Test
    void baseRefAndRepositoryMustBeGitNamesSoNoLogLineCanBeForged() {
        String alice = Tokens.user("alice");
        createJob(alice, "evil", "{\"input\":{\"prompt\":\"p\",\"baseRef\":\"main\\nrefs/heads/evil\"}}")
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("check-ref-format"));
        createJob(alice, "repo", "{\"input\":{\"prompt\":\"p\",\"repository\":\"../../etc\"}}")
                .then()
                .statusCode(400)
                .body("detail", org.hamcrest.Matchers.containsString("'input.repository'"));
        assertThat(count("SELECT count(*) FROM job")).isZero();
        createJob(
                        alice,
                        "fine",
                        "{\"input\":{\"prompt\":\"p\",\"repository\":\"acme/demo.git\",\"baseRef\":\"release/2.x\"}}")
                .then()
                .statusCode(201);
    }

    @Test
    void pageAndApiCarrySecurityHeadersAndLocationIgnoresTheHostHeader() {
        String alice = Tokens.user("alice");
        List<Response> responses = List.of(
                given().get("/"),
                given().get("/app.js"),
                as(alice).get("/jobs"),
                given().get("/jobs"),
                as(alice).get("/jobs/not-a-uuid"));
        for (Response response : responses) {
            assertThat(response.header("Content-Security-Policy"))
                    .contains("default-src 'self'")
                    .contains("frame-ancestors 'none'");
            assertThat(response.header("X-Content-Type-Options")).isEqualTo("nosniff");
            assertThat(response.header("Referrer-Policy")).isEqualTo("no-referrer");
            assertThat(response.header("X-Frame-Options")).isEqualTo("DENY");
        }
        Response created = as(alice)
                .contentType("application/json")
                .header("Idempotency-Key", "spoofed-host")
                .header("Host", "evil.example")
                .header("X-Forwarded-Host", "evil.example")
                .body(JOB_BODY)
                .post("/jobs");
        created.then().statusCode(201);
        assertThat(created.header("Location")).isEqualTo("/jobs/" + created.path("id"));
    }

    /**
     * A connection that sends a request head declaring a body, then only the first bytes of it. It
     * declares 100 kB: 256 of them hold 25 MB, inside the bound on body bytes in flight (64 MiB), so
     * these tests meet the bound they are about (UploadGuardTest meets that one).
     */
    private static Socket slowUpload(String path, String extraHeaders) throws IOException {
        Socket socket = new Socket("127.0.0.1", io.restassured.RestAssured.port);
        socket.setSoTimeout(10_000);
        String head = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + extraHeaders + "Content-Length: 100000\r\n\r\n{\"in";
        socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return socket;
    }

    /** The first response on the connection: its head and a body of the length it declares. */
    private static String firstResponse(Socket socket) throws IOException {
        var in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int next = in.read();
            if (next < 0) {
                break;
            }
            head.append((char) next);
        }
        java.util.regex.Matcher length =
                java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        byte[] body = length.find() ? in.readNBytes(Integer.parseInt(length.group(1))) : new byte[0];
        return head + new String(body, StandardCharsets.UTF_8);
    }

    /** The status line and body the server sent on the connection, read until it closes it. */
    private static String answer(Socket socket) throws IOException {
        return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }

    @Test
    void aBodyFromNobodyWhoCouldAuthenticateIsRefusedBeforeItArrives() throws IOException {
        try (Socket anonymous = slowUpload("/jobs", "Idempotency-Key: k\r\n");
                Socket unsigned = slowUpload("/callbacks/fake-a", "")) {
            // The body never comes: a server that waited for it would answer 408 at the body deadline,
            // so a 401 is the proof that the refusal came first (no clock needed, on any machine load).
            assertThat(firstResponse(anonymous)).startsWith("HTTP/1.1 401").contains("\"code\":\"unauthenticated\"");
            assertThat(firstResponse(unsigned)).startsWith("HTTP/1.1 401").contains("\"code\":\"signature-invalid\"");
        }
    }

    @Test
    void slowBodiesParkNoWorkerThreadAndAreCutAtTheirDeadline() throws IOException {
        String alice = Tokens.user("alice");
        // More slow uploads than the worker pool has threads (200): if each parked one, nothing
        // below could be served until their deadline.
        List<Socket> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 250; i++) {
                slow.add(slowUpload(
                        "/jobs", "Authorization: Bearer " + alice + "\r\nIdempotency-Key: slow-" + i + "\r\n"));
            }
            as(alice).get("/jobs").then().statusCode(200);
            management().get("/q/health/ready").then().statusCode(200);
            // Served while the newest slow upload still waits for its body: had the uploads parked the
            // worker threads, these requests would only have been served once the deadline cut them.
            assertThat(slow.get(slow.size() - 1).getInputStream().available())
                    .as("the newest slow upload was already answered: the requests above waited for the deadline")
                    .isZero();
            // The deadline (3 s in tests) answers each with 408 and closes it.
            assertThat(answer(slow.get(0))).startsWith("HTTP/1.1 408").contains("\"code\":\"request-timeout\"");
        } finally {
            for (Socket socket : slow) {
                socket.close();
            }
        }
        assertThat(count("SELECT count(*) FROM job")).isZero();
    }

    @Test
    void onePeerGetsAtMost256BodiesInFlightAndAChunkedBodyPastTheLimitIsAProblem() throws IOException {
        String alice = Tokens.user("alice");
        List<Socket> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 256; i++) {
                slow.add(slowUpload(
                        "/jobs", "Authorization: Bearer " + alice + "\r\nIdempotency-Key: cap-" + i + "\r\n"));
            }
            // Wait until the server has taken all 256 in, then one more from the same address is refused.
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(2))
                    .until(() -> createJob(alice, "over-the-cap", JOB_BODY).statusCode() == 429);
            createJob(alice, "over-the-cap", JOB_BODY).then().statusCode(429).body("code", equalTo("too-many-uploads"));
        } finally {
            for (Socket socket : slow) {
                socket.close();
            }
        }
        // Chunked (no Content-Length), 2 MiB: read on the event loop until the limit, then a problem.
        try (Socket chunked = new Socket("127.0.0.1", io.restassured.RestAssured.port)) {
            chunked.setSoTimeout(10_000);
            var out = chunked.getOutputStream();
            out.write(("POST /jobs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + alice
                            + "\r\nIdempotency-Key: chunked\r\nContent-Type: application/json\r\n"
                            + "Transfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[64 * 1024];
            java.util.Arrays.fill(chunk, (byte) 'a');
            try {
                for (int i = 0; i < 32; i++) {
                    out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(chunk);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            } catch (IOException closedByTheServer) {
                // Expected: the server answers and closes once the limit is passed.
            }
            assertThat(answer(chunked))
                    .startsWith("HTTP/1.1 413")
                    .contains("application/problem+json")
                    .contains("\"code\":\"payload-too-large\"");
        }
        assertThat(count("SELECT count(*) FROM job")).isZero();
    }

    @Test
    void logLinesAreJsonSoAValueWithANewlineForgesNoLine() throws Exception {
        java.util.logging.Formatter json =
                consoleFormatters(java.util.logging.Logger.getLogger("").getHandlers()).stream()
                        .filter(f -> f.getClass().getName().contains("Json"))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("the console does not write JSON"));
        var record = new org.jboss.logmanager.ExtLogRecord(
                java.util.logging.Level.INFO, "baseRef main\nrefs/heads/evil", HostileInputTest.class.getName());
        String line = json.format(record);
        // One line, whatever the message holds; the newline stays inside the message field.
        assertThat(line.strip()).doesNotContain("\n");
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper()
                        .readTree(line)
                        .path("message")
                        .asText())
                .isEqualTo("baseRef main\nrefs/heads/evil");
    }

    private static List<java.util.logging.Formatter> consoleFormatters(java.util.logging.Handler[] handlers) {
        List<java.util.logging.Formatter> formatters = new ArrayList<>();
        for (java.util.logging.Handler handler : handlers) {
            if (handler.getFormatter() != null) {
                formatters.add(handler.getFormatter());
            }
            if (handler instanceof org.jboss.logmanager.ExtHandler nested) {
                formatters.addAll(consoleFormatters(nested.getHandlers()));
            }
        }
        return formatters;
    }
}
