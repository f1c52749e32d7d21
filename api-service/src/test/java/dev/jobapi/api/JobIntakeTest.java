package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.startsWith;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.contract.OutsideTheContract;
import dev.jobapi.common.digest.CanonicalJson;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** docs/design.md, rule 1, and the POST /jobs table of docs/api.md#jobs, over the real database. */
@QuarkusTest
class JobIntakeTest extends ApiTestSupport {

    private final String alice = Tokens.user("alice");

    @Test
    void createsJobWithFirstAttemptAndLocation() {
        Response created = createJob(alice, "k-1", JOB_BODY);
        created.then()
                .statusCode(201)
                .body("state", equalTo("accepted"))
                .body("idempotencyKey", equalTo("k-1"))
                .body("inputDigest", startsWith("sha256:"))
                .body("input.prompt", equalTo("fix the off-by-one"))
                .body("winningAttemptId", equalTo(null))
                .body("attempts.size()", equalTo(1))
                .body("attempts[0].state", equalTo("starting"))
                .body("attempts[0].provider", equalTo("fake-a"))
                .body("actions", equalTo(List.of("cancel")));
        assertThat(created.header("Location")).endsWith("/jobs/" + created.path("id"));
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(1);
    }

    /**
     * Rule 18 at intake: a deadline is an RFC 3339 instant or a time to live, kept with the job and
     * shown; a retry of the same body is the same job. A deadline that is past, too far, malformed or
     * given both ways is a 400 and makes no job (below).
     */
    @Test
    void aJobCarriesTheDeadlineItWasGiven() {
        String ttl = "{\"input\":{\"prompt\":\"soon\"},\"ttlSeconds\":600}";
        Response created = createJob(alice, "k-ttl", ttl);
        created.then().statusCode(201).body("deadline", notNullValue()).body("cancelReason", equalTo(null));
        Instant deadline = Instant.parse(created.path("deadline"));
        assertThat(Duration.between(Instant.parse(created.path("createdAt")), deadline))
                .isEqualTo(Duration.ofSeconds(600));
        createJob(alice, "k-ttl", ttl).then().statusCode(200).body("deadline", equalTo(created.path("deadline")));
        String at = Instant.now()
                .plus(Duration.ofDays(1))
                .truncatedTo(ChronoUnit.SECONDS)
                .toString();
        createJob(alice, "k-at", "{\"input\":{\"prompt\":\"by tomorrow\"},\"deadline\":\"" + at + "\"}")
                .then()
                .statusCode(201)
                .body("deadline", equalTo(at));
    }

    @Test
    @OutsideTheContract("deadlines the document refuses, to see the api refuse them too")
    void aDeadlineThatIsPastTooFarMalformedOrGivenTwiceIsRefusedWithoutAJob() {
        String at = Instant.now()
                .plus(Duration.ofDays(1))
                .truncatedTo(ChronoUnit.SECONDS)
                .toString();
        List<String> refused = List.of(
                "\"deadline\":\"2001-01-01T00:00:00Z\"",
                "\"deadline\":\"" + Instant.now().plus(Duration.ofDays(31)) + "\"",
                "\"deadline\":\"tomorrow\"",
                "\"deadline\":\"2030-01-01T00:00:00\"",
                "\"ttlSeconds\":0",
                "\"ttlSeconds\":2592001",
                "\"ttlSeconds\":60,\"deadline\":\"" + at + "\"");
        for (String field : refused) {
            createJob(alice, "k-bad-" + refused.indexOf(field), "{\"input\":{\"prompt\":\"x\"}," + field + "}")
                    .then()
                    .statusCode(400)
                    .body("code", equalTo("invalid-request"));
        }
        assertThat(count("SELECT count(*) FROM job WHERE idempotency_key LIKE 'k-bad-%'"))
                .isZero();
    }

    /**
     * A poll with the tag it last saw costs a 304 until anything in the body changes, an attempt's
     * state included (which leaves the job's own version alone).
     */
    @Test
    void aJobReadWithItsETagIsNotModifiedUntilAnythingInItChanges() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        Response first = as(alice).get("/jobs/" + id);
        first.then().statusCode(200).header("Cache-Control", "no-cache, private");
        String tag = first.header("ETag");
        assertThat(tag).matches("\"[0-9a-f]{64}\"");

        as(alice)
                .header("If-None-Match", tag)
                .get("/jobs/" + id)
                .then()
                .statusCode(304)
                .header("ETag", tag)
                .body(equalTo(""));

        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400' WHERE job_id = '" + id + "'");
        Response changed = as(alice).header("If-None-Match", tag).get("/jobs/" + id);
        changed.then().statusCode(200).body("attempts[0].state", equalTo("failed"));
        assertThat(changed.header("ETag")).isNotEqualTo(tag);
    }

    @Test
    void replaysJobForSameKeyAndBody() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(200)
                .header("Idempotent-Replayed", "true")
                .body("id", equalTo(id));
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(1);
    }

    @Test
    void replaysJobForSameKeyAndReorderedJson() {
        String id = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String reordered =
                "{ \"provider\" : \"fake-a\", \"input\" : { \"baseRef\":\"main\", \"repository\":\"demo\", \"prompt\":\"fix the off-by-one\" } }";
        createJob(alice, "k-1", reordered).then().statusCode(200).body("id", equalTo(id));
    }

    @Test
    void refusesSameKeyWithChangedInput() {
        createJob(alice, "k-1", JOB_BODY).then().statusCode(201);
        createJob(alice, "k-1", JOB_BODY.replace("off-by-one", "typo"))
                .then()
                .statusCode(422)
                .contentType("application/problem+json")
                .body("code", equalTo("idempotency-key-reused"))
                .body("status", equalTo(422))
                .body("type", notNullValue())
                .body("title", notNullValue())
                .body("detail", notNullValue());
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
    }

    @Test
    void retryOfAJobWhoseProviderWasRemovedSinceGetsTheJobNotARefusal() throws Exception {
        // Made while fake-retired was configured; its answer was lost; a deploy removed the provider.
        String body = JOB_BODY.replace("\"fake-a\"", "\"fake-retired\"");
        String digest = CanonicalJson.digest(new ObjectMapper().readTree(body));
        String id = "8f6c2e1a-0000-4000-8000-000000000001";
        execute("INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, state, version,"
                + " created_at, updated_at) VALUES ('" + id + "', 'alice', 'k-retired', '" + digest
                + "', '{}', 'fake-retired', 'running', 0, now(), now())");

        createJob(alice, "k-retired", body)
                .then()
                .statusCode(200)
                .header("Idempotent-Replayed", "true")
                .body("id", equalTo(id));
        // Another key with that body would make a new job: refused as before.
        createJob(alice, "k-fresh", body).then().statusCode(422).body("code", equalTo("unknown-provider"));
        // And the key still guards its body.
        createJob(alice, "k-retired", body.replace("off-by-one", "typo"))
                .then()
                .statusCode(422)
                .body("code", equalTo("idempotency-key-reused"));
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(1);
    }

    @Test
    void sameKeyFromAnotherOwnerMakesAnotherJob() {
        String first = createJob(alice, "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String second = createJob(Tokens.user("bob"), "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        assertThat(second).isNotEqualTo(first);
    }

    @Test
    void fiftyConcurrentIdenticalRequestsMakeExactlyOneJob() throws Exception {
        int clients = 50;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Response>> futures = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                Callable<Response> call = () -> {
                    start.await();
                    return createJob(alice, "double-click", JOB_BODY);
                };
                futures.add(pool.submit(call));
            }
            start.countDown();
            Set<String> ids = new HashSet<>();
            int created = 0;
            for (Future<Response> future : futures) {
                Response response = future.get();
                assertThat(response.statusCode()).isIn(200, 201);
                created += response.statusCode() == 201 ? 1 : 0;
                ids.add(response.path("id"));
            }
            assertThat(ids).hasSize(1);
            assertThat(created).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(count("SELECT count(*) FROM job WHERE idempotency_key = 'double-click'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM attempt")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(1);
    }

    @Test
    @OutsideTheContract("sends no Idempotency-Key, which the document requires")
    void missingIdempotencyKeyIs400() {
        as(alice)
                .contentType(ContentType.JSON)
                .body(JOB_BODY)
                .post("/jobs")
                .then()
                .statusCode(400)
                .contentType("application/problem+json")
                .body("code", equalTo("idempotency-key-missing"));
    }

    @Test
    @OutsideTheContract("sends Idempotency-Keys that break the document's length and pattern")
    void malformedIdempotencyKeyIs400() {
        createJob(alice, "x".repeat(256), JOB_BODY)
                .then()
                .statusCode(400)
                .body("code", equalTo("idempotency-key-invalid"));
        createJob(alice, "caf\u00e9", JOB_BODY).then().statusCode(400).body("code", equalTo("idempotency-key-invalid"));
    }

    @OutsideTheContract("sends a body that is not JSON")
    @Test
    void malformedJsonIs400() {
        createJob(alice, "k", "{\"input\": {").then().statusCode(400).body("code", equalTo("invalid-request"));
        createJob(alice, "k", "[1,2]").then().statusCode(400).body("code", equalTo("invalid-request"));
    }

    @OutsideTheContract("sends fields of the wrong type")
    @Test
    void wrongTypesAre400() {
        createJob(alice, "k", "{\"input\":\"text\"}").then().statusCode(400).body("code", equalTo("invalid-request"));
        createJob(alice, "k", "{\"input\":{},\"provider\":{}}")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
        createJob(alice, "k", "{\"provider\":\"fake-a\"}")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
    }

    @OutsideTheContract("sends a field the schema does not have")
    @Test
    void unknownTopLevelFieldIs400ButInputIsFreeForm() {
        createJob(alice, "k", "{\"input\":{},\"priority\":1}")
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"))
                .body("detail", startsWith("Unknown field 'priority'"));
        createJob(alice, "k2", "{\"input\":{\"anything\":[1,{\"goes\":true}]}}")
                .then()
                .statusCode(201);
    }

    @Test
    void nestingDeeperThanTheBoundIs400() {
        String deep = "{\"input\":" + "{\"a\":".repeat(40) + "1" + "}".repeat(40) + "}";
        createJob(alice, "k", deep).then().statusCode(400).body("code", equalTo("invalid-request"));
    }

    @Test
    void bodyOverTheLimitIs413() {
        String big = "{\"input\":{\"prompt\":\"" + "x".repeat(1_100_000) + "\"}}";
        createJob(alice, "k", big)
                .then()
                .statusCode(413)
                .contentType("application/problem+json")
                .body("code", equalTo("payload-too-large"));
        assertThat(count("SELECT count(*) FROM job")).isZero();
    }

    @Test
    void unknownProviderIs422() {
        createJob(alice, "k", "{\"input\":{},\"provider\":\"nope\"}")
                .then()
                .statusCode(422)
                .body("code", equalTo("unknown-provider"));
    }

    @OutsideTheContract("sends text/plain")
    @Test
    void wrongContentTypeIs415() {
        as(alice)
                .contentType(ContentType.TEXT)
                .header("Idempotency-Key", "k")
                .body(JOB_BODY)
                .post("/jobs")
                .then()
                .statusCode(415)
                .contentType("application/problem+json")
                .body("code", equalTo("unsupported-media-type"));
    }

    @OutsideTheContract("asks for paths and methods the api does not serve")
    @Test
    void unknownRoutesAre404AndWrongMethodsAre405() {
        as(alice).get("/nothing-here").then().statusCode(404).contentType("application/problem+json");
        as(alice).delete("/jobs").then().statusCode(405).contentType("application/problem+json");
    }

    @Test
    void defaultProviderIsUsedWhenNoneIsNamed() {
        createJob(alice, "k", "{\"input\":{\"prompt\":\"p\"}}")
                .then()
                .statusCode(201)
                .body("attempts[0].provider", equalTo("fake-a"));
    }

    @OutsideTheContract("asks for an unknown state and asks without a token")
    @Test
    void listsOwnJobsNewestFirstWithCursor() {
        for (int i = 0; i < 3; i++) {
            createJob(alice, "k-" + i, JOB_BODY).then().statusCode(201);
        }
        createJob(Tokens.user("bob"), "k-bob", JOB_BODY).then().statusCode(201);
        Response first = as(alice).get("/jobs?limit=2");
        first.then().statusCode(200).body("items.size()", equalTo(2)).body("items[0].idempotencyKey", equalTo("k-2"));
        String cursor = first.path("nextCursor");
        as(alice)
                .get("/jobs?limit=2&cursor=" + cursor)
                .then()
                .statusCode(200)
                .body("items.size()", equalTo(1))
                .body("items[0].idempotencyKey", equalTo("k-0"))
                .body("nextCursor", equalTo(null));
        as(alice).get("/jobs?state=completed").then().statusCode(200).body("items.size()", equalTo(0));
        as(alice).get("/jobs?state=bogus").then().statusCode(400);
        given().get("/jobs").then().statusCode(401);
    }
}
