package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

import dev.jobapi.api.contract.OutsideTheContract;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/** docs/design.md, rule 10: ownership on every verb; another owner's job is a 404, never a 403. */
@QuarkusTest
class OwnershipTest extends ApiTestSupport {

    private String aliceJob() {
        return createJob(Tokens.user("alice"), "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
    }

    @Test
    void anotherUsersJobIsNotFoundOnEveryVerb() {
        String id = aliceJob();
        String bob = Tokens.user("bob");
        as(bob).get("/jobs/" + id).then().statusCode(404).body("code", equalTo("job-not-found"));
        as(bob).post("/jobs/" + id + "/cancel").then().statusCode(404).body("code", equalTo("job-not-found"));
        as(bob).get("/jobs/" + id + "/output").then().statusCode(404).body("code", equalTo("job-not-found"));
        requestAttempt(bob, id, "a-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(404)
                .body("code", equalTo("job-not-found"));
        as(bob).get("/jobs").then().statusCode(200).body("items.size()", equalTo(0));
    }

    @Test
    void ownerAndReviewerSeeTheJob() {
        String id = aliceJob();
        as(Tokens.user("alice")).get("/jobs/" + id).then().statusCode(200).body("id", equalTo(id));
        as(Tokens.reviewer("rita")).get("/jobs/" + id).then().statusCode(200).body("id", equalTo(id));
        as(Tokens.of("otto", "operator")).get("/jobs/" + id).then().statusCode(200);
    }

    @Test
    void aReviewerCancellingAnotherOwnersJobIsAuditedAndTheOwnerCancellingIsNot() {
        String ritasCancel = aliceJob();
        as(Tokens.reviewer("rita"))
                .post("/jobs/" + ritasCancel + "/cancel")
                .then()
                .statusCode(200);
        String alicesCancel = createJob(Tokens.user("alice"), "k-2", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        as(Tokens.user("alice"))
                .post("/jobs/" + alicesCancel + "/cancel")
                .then()
                .statusCode(200);
        as(Tokens.of("otto", "operator"))
                .get("/admin/audit")
                .then()
                .statusCode(200)
                .body("size()", equalTo(1))
                .body("[0].actor", equalTo("rita"))
                .body("[0].action", equalTo("job.cancel"))
                .body("[0].jobId", equalTo(ritasCancel))
                .body("[0].details", equalTo("owner alice"));
    }

    @Test
    void aReviewerRequestingAPaidAttemptOnAnotherOwnersJobIsAuditedAndTheOwnerRequestingIsNot() {
        String id = aliceJobWithFailedFirstAttempt();
        String ritasAttempt = requestAttempt(Tokens.reviewer("rita"), id, "rita-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("UPDATE attempt SET state = 'failed', reason = 'provider said 400' WHERE id = '" + ritasAttempt + "'");
        requestAttempt(Tokens.user("alice"), id, "alice-1", "{\"provider\":\"fake-b\"}")
                .then()
                .statusCode(201);

        as(Tokens.of("otto", "operator"))
                .get("/admin/audit")
                .then()
                .statusCode(200)
                .body("size()", equalTo(1))
                .body("[0].actor", equalTo("rita"))
                .body("[0].action", equalTo("attempt.request"))
                .body("[0].jobId", equalTo(id))
                .body("[0].attemptId", equalTo(ritasAttempt))
                .body("[0].details", equalTo("owner alice, provider fake-b"));
    }

    @OutsideTheContract("asks without a token")
    @Test
    void missingTokenIs401() {
        String id = aliceJob();
        given().get("/jobs/" + id)
                .then()
                .statusCode(401)
                .contentType("application/problem+json")
                .body("code", equalTo("unauthenticated"));
    }

    @Test
    void tokenSignedWithAnotherKeyIs401() throws Exception {
        String id = aliceJob();
        as(Tokens.signedWithAnotherKey("alice")).get("/jobs/" + id).then().statusCode(401);
    }

    @Test
    void expiredOrMalformedTokenIs401() {
        String id = aliceJob();
        as(Tokens.expired("alice")).get("/jobs/" + id).then().statusCode(401);
        as("not.a.jwt").get("/jobs/" + id).then().statusCode(401);
    }

    @Test
    void tokenExpiredLongerAgoThanTheClockSkewIs401() {
        String id = aliceJob();
        as(Tokens.justExpired("alice")).get("/jobs/" + id).then().statusCode(401);
    }

    @Test
    void tokenWithoutSubIsRefusedBeforeAnyHandlerWritesOrRepublishes() {
        String noSub = Tokens.withoutSubject("alice", "user", "operator");
        createJob(noSub, "no-sub", JOB_BODY)
                .then()
                .statusCode(401)
                .body("code", equalTo("unauthenticated"))
                .body("detail", org.hamcrest.Matchers.containsString("'sub'"));
        as(noSub)
                .contentType("application/json")
                .body("{\"ids\":[\"1\"]}")
                .post("/admin/dlq/replay")
                .then()
                .statusCode(401);
        org.assertj.core.api.Assertions.assertThat(count("SELECT count(*) FROM job"))
                .isZero();
        org.assertj.core.api.Assertions.assertThat(count("SELECT count(*) FROM audit_record"))
                .isZero();
    }

    @Test
    void tokenWithoutAKnownRoleIs403() {
        as(Tokens.of("mallory", "guest")).get("/jobs").then().statusCode(403).body("code", equalTo("forbidden"));
    }

    @Test
    @OutsideTheContract("asks for a job id that is not the UUID the document requires")
    void malformedJobIdIs404() {
        as(Tokens.user("alice")).get("/jobs/not-a-uuid").then().statusCode(404).body("code", equalTo("job-not-found"));
    }
}
