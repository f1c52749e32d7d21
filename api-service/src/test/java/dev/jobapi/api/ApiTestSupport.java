package dev.jobapi.api;

import static io.restassured.RestAssured.given;

import dev.jobapi.api.contract.ContractValidation;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.testing.TestBroker;
import dev.jobapi.common.testing.TestDatabase;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/** Starts every API test from empty tables and queues, and offers the request shapes tests repeat. */
public abstract class ApiTestSupport {

    protected static final String JOB_BODY =
            "{\"input\":{\"prompt\":\"fix the off-by-one\",\"repository\":\"demo\",\"baseRef\":\"main\"},\"provider\":\"fake-a\"}";

    @Inject
    protected EntityManager em;

    @Inject
    protected BrokerConnection broker;

    @BeforeEach
    void checkExchangesAgainstTheDocument(TestInfo test) {
        ContractValidation.installFor(test.getTestMethod().orElseThrow());
    }

    @BeforeEach
    @AfterEach
    void resetState() {
        TestDatabase.reset(em);
        TestBroker.purge(broker);
    }

    /** The management interface (health, metrics): a port of its own, never the API's. */
    public static RequestSpecification management() {
        return given().port(ConfigProvider.getConfig().getValue("quarkus.management.test-port", Integer.class));
    }

    protected static RequestSpecification as(String token) {
        return given().header("Authorization", "Bearer " + token);
    }

    protected static Response createJob(String token, String key, String body) {
        return as(token)
                .contentType(ContentType.JSON)
                .header("Idempotency-Key", key)
                .body(body)
                .post("/jobs");
    }

    protected static Response requestAttempt(String token, String jobId, String key, String body) {
        return as(token)
                .contentType(ContentType.JSON)
                .header("Idempotency-Key", key)
                .body(body)
                .post("/jobs/" + jobId + "/attempts");
    }

    /** A job of alice whose first attempt failed, so a new attempt is allowed. */
    protected String aliceJobWithFailedFirstAttempt() {
        String id = createJob(Tokens.user("alice"), "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400' WHERE job_id = '" + id + "'");
        return id;
    }

    /** A job of the owner whose first attempt has this usage record (null tokens for unknown spend). */
    protected void aJobWithUsage(String owner, String provider, Integer prompt, Integer completion, String source) {
        String job = createJob(Tokens.user(owner), "k-" + provider + prompt + source, JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) SELECT id, '" + owner + "', '" + provider + "', " + prompt + ", " + completion
                + ", '" + source + "', now() FROM attempt WHERE job_id = '" + job + "'");
    }

    protected long count(String sql) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em.createNativeQuery(sql).getSingleResult()).longValue());
    }

    protected String text(String sql) {
        return QuarkusTransaction.requiringNew()
                .call(() -> (String) em.createNativeQuery(sql).getSingleResult());
    }

    protected void execute(String sql) {
        QuarkusTransaction.requiringNew().run(() -> em.createNativeQuery(sql).executeUpdate());
    }
}
