package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.jobapi.api.contract.OutsideTheContract;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 12, as operators and clients see it: acceptance runs, eligibility, a job's
 * fallback list.
 */
@QuarkusTest
class ProviderAdminTest extends ApiTestSupport {

    private final String otto = Tokens.of("otto", "operator");

    @Test
    void operatorRequestsOneAcceptanceRunAtATimeAndFollowsIt() {
        String location = as(otto).post("/admin/providers/fake-b/acceptance")
                .then()
                .statusCode(202)
                .body("state", equalTo("requested"))
                .body("requestedBy", equalTo("otto"))
                .extract()
                .header("Location");
        // Asked again while it waits: the same run, not a second one.
        String again = as(otto).post("/admin/providers/fake-b/acceptance")
                .then()
                .statusCode(200)
                .extract()
                .header("Location");
        assertThat(again).isEqualTo(location);
        assertThat(count("SELECT count(*) FROM provider_acceptance")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'provider.acceptance.requested'"))
                .isEqualTo(1);

        as(otto).get(location).then().statusCode(200).body("provider", equalTo("fake-b"));
        as(otto).post("/admin/providers/nope/acceptance").then().statusCode(404).body("code", equalTo("not-found"));
        as(otto).get(location.replace("fake-b", "fake-a")).then().statusCode(404);
    }

    /**
     * Rule 19 from the operator's side: a pause is kept with who, when and why and shown with the
     * provider; pausing again changes nothing; the resume announces the provider's held attempts
     * again (an unclaimed starting attempt of another provider, or one already announced, is left
     * alone); both are audited; a pause needs a reason and a known provider.
     */
    @Test
    void aPausedProviderIsShownAndItsResumeAnnouncesItsHeldAttemptsAgain() {
        as(otto).contentType("application/json")
                .body("{\"reason\":\"fake-a is down since 14:00\"}")
                .post("/admin/providers/fake-a/pause")
                .then()
                .statusCode(200)
                .body("paused", equalTo(true))
                .body("pause.pausedBy", equalTo("otto"))
                .body("pause.reason", equalTo("fake-a is down since 14:00"));
        as(otto).contentType("application/json")
                .body("{\"reason\":\"again\"}")
                .post("/admin/providers/fake-a/pause")
                .then()
                .statusCode(200)
                .body("pause.reason", equalTo("fake-a is down since 14:00"));
        as(Tokens.user("alice")).get("/me").then().statusCode(200).body("pausedProviders", contains("fake-a"));
        as(otto).get("/admin/providers")
                .then()
                .statusCode(200)
                .body("find { it.name == 'fake-a' }.paused.pausedBy", equalTo("otto"));

        String held = createJob(Tokens.user("alice"), "k-held", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String other = createJob(
                        Tokens.user("alice"), "k-other", "{\"input\":{\"prompt\":\"x\"},\"provider\":\"fake-b\"}")
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        // The first announcements are sent (by the relay, or here if it has not come round yet).
        execute("UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL");

        as(otto).contentType("application/json")
                .body("{\"reason\":\"fake-a is back\"}")
                .post("/admin/providers/fake-a/resume")
                .then()
                .statusCode(200)
                .body("paused", equalTo(false))
                .body("reannounced", equalTo(1));
        as(Tokens.user("alice")).get("/me").then().statusCode(200).body("pausedProviders", empty());
        assertThat(count("SELECT count(*) FROM outbox WHERE job_id = '" + held + "'"))
                .isEqualTo(2);
        assertThat(count("SELECT count(*) FROM outbox WHERE job_id = '" + other + "'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_record WHERE action IN ('provider.pause', 'provider.resume')"))
                .isEqualTo(2);
        // Resuming what is not paused changes nothing and is not audited.
        as(otto).contentType("application/json")
                .body("{\"reason\":\"once more\"}")
                .post("/admin/providers/fake-a/resume")
                .then()
                .statusCode(200)
                .body("reannounced", equalTo(0));
        assertThat(count("SELECT count(*) FROM audit_record WHERE action = 'provider.resume'"))
                .isEqualTo(1);

        as(otto).contentType("application/json")
                .body("{\"reason\":\"x\"}")
                .post("/admin/providers/nope/pause")
                .then()
                .statusCode(404);
    }

    /** Rule 21: each provider's health gate, as the workers share it, is shown to operators. */
    @Test
    void aProvidersHealthGateIsShownWithWhatHoldsItsCalls() {
        execute("INSERT INTO provider_health (provider, state, window_started_at, window_calls, window_faults,"
                + " opened_at, retry_at, last_fault, updated_at) VALUES ('fake-a', 'open', now(), 20, 17, now(),"
                + " now() + interval '15 seconds', 'provider answered 503: overloaded', now())");
        execute("INSERT INTO provider_health (provider, window_started_at, limited_until, limit_reason, updated_at)"
                + " VALUES ('fake-b', now(), now() + interval '1 minute', 'provider answered 429', now())");

        as(otto).get("/admin/providers")
                .then()
                .statusCode(200)
                .body("find { it.name == 'fake-a' }.health.breaker", equalTo("open"))
                .body("find { it.name == 'fake-a' }.health.windowFaults", equalTo(17))
                .body("find { it.name == 'fake-a' }.health.lastFault", startsWith("provider answered 503"))
                .body("find { it.name == 'fake-a' }.health.open", equalTo(false))
                .body("find { it.name == 'fake-b' }.health.breaker", equalTo("closed"))
                .body("find { it.name == 'fake-b' }.health.limitReason", equalTo("provider answered 429"))
                .body("find { it.name == 'fake-b' }.health.open", equalTo(false))
                .body("find { it.name == 'fake-anthropic' }.health.open", equalTo(true));
    }

    /** Rule 21: a half-open breaker shows its probe calls counted, their faults, and those under way. */
    @Test
    void aHalfOpenBreakersProbesAreShown() {
        execute("INSERT INTO provider_health (provider, state, window_started_at, opened_at, retry_at, probe_calls,"
                + " probe_faults, last_fault, updated_at) VALUES ('fake-a', 'half_open', now(), now(), now(), 2, 1,"
                + " 'provider answered 503', now())");
        execute("INSERT INTO provider_probe (attempt_id, provider, claimed_at) VALUES (gen_random_uuid(), 'fake-a',"
                + " now()), (gen_random_uuid(), 'fake-a', now())");

        as(otto).get("/admin/providers")
                .then()
                .statusCode(200)
                .body("find { it.name == 'fake-a' }.health.breaker", equalTo("half_open"))
                .body("find { it.name == 'fake-a' }.health.probeCalls", equalTo(2))
                .body("find { it.name == 'fake-a' }.health.probeFaults", equalTo(1))
                .body("find { it.name == 'fake-a' }.health.probesUnderWay", equalTo(2))
                .body("find { it.name == 'fake-a' }.health.open", equalTo(false))
                .body("find { it.name == 'fake-b' }.health.probesUnderWay", equalTo(0));
    }

    @Test
    void aProvidersLimitsAndItsLoadAgainstThemAreShown() {
        String job = createJob(Tokens.user("alice"), "k-load", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        execute("UPDATE attempt SET lease_owner = 'worker-1', lease_expires_at = now() + interval '1 minute'"
                + " WHERE job_id = '" + job + "'");
        execute("INSERT INTO provider_health (provider, window_started_at, max_in_flight, requests_per_minute,"
                + " tokens_per_minute, rate_minute, minute_requests, minute_tokens, updated_at) VALUES"
                + " ('fake-a', now(), 8, 60, 100000, date_trunc('minute', now()), 41, 9000, now()),"
                + " ('fake-b', now(), NULL, 60, NULL, date_trunc('minute', now()) - interval '1 minute', 60, 0,"
                + " now())");

        as(otto).get("/admin/providers")
                .then()
                .statusCode(200)
                .body("find { it.name == 'fake-a' }.limits.maxInFlight", equalTo(8))
                .body("find { it.name == 'fake-a' }.limits.requestsPerMinute", equalTo(60))
                .body("find { it.name == 'fake-a' }.limits.tokensPerMinute", equalTo(100000))
                .body("find { it.name == 'fake-a' }.usage.inFlight", equalTo(1))
                .body("find { it.name == 'fake-a' }.usage.requestsThisMinute", equalTo(41))
                .body("find { it.name == 'fake-a' }.usage.tokensThisMinute", equalTo(9000))
                // Counted in a minute that is over: nothing this minute.
                .body("find { it.name == 'fake-b' }.limits.maxInFlight", nullValue())
                .body("find { it.name == 'fake-b' }.usage.requestsThisMinute", equalTo(0))
                .body("find { it.name == 'fake-anthropic' }.limits.requestsPerMinute", nullValue())
                .body("find { it.name == 'fake-anthropic' }.usage.inFlight", equalTo(0));
    }

    @Test
    @OutsideTheContract("a pause without its required reason")
    void aPauseWithoutAReasonIsRefused() {
        as(otto).contentType("application/json")
                .body("{}")
                .post("/admin/providers/fake-a/pause")
                .then()
                .statusCode(400);
        assertThat(count("SELECT count(*) FROM provider_pause")).isZero();
    }

    @Test
    void providersShowWhetherAutomaticFallbackMayPickThemAndWhyNot() {
        execute("INSERT INTO provider_acceptance (id, provider, state, requested_by, requested_at, finished_at,"
                + " tasks_total, tasks_done, tasks_passed) VALUES"
                + " (gen_random_uuid(), 'fake-a', 'passed', 'otto', now(), now() - interval '8 days', 3, 3, 3),"
                + " (gen_random_uuid(), 'fake-b', 'passed', 'otto', now(), now() - interval '1 hour', 3, 3, 3)");

        JsonPath providers = as(otto).get("/admin/providers")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();

        assertThat(providers.getList("name")).containsExactly("fake-a", "fake-b", "fake-anthropic");
        assertThat(providers.getBoolean("[0].accepted")).isFalse();
        assertThat(providers.getString("[0].refusal")).contains("longer ago than PT168H");
        assertThat(providers.getBoolean("[1].accepted")).isTrue();
        assertThat(providers.getString("[1].refusal")).isNull();
        assertThat(providers.getString("[1].latestRun.state")).isEqualTo("passed");
    }

    @Test
    void jobCarriesItsFallbackListWhichMustNameKnownOtherProviders() {
        String body = "{\"input\":{\"prompt\":\"p\"},\"provider\":\"fake-a\",\"fallback\":[\"fake-b\"]}";
        createJob(Tokens.user("alice"), "k-fb", body).then().statusCode(201).body("fallback", contains("fake-b"));
        createJob(Tokens.user("alice"), "k-plain", JOB_BODY)
                .then()
                .statusCode(201)
                .body("fallback", org.hamcrest.Matchers.empty());

        createJob(Tokens.user("alice"), "k-unknown", body.replace("[\"fake-b\"]", "[\"fake-z\"]"))
                .then()
                .statusCode(422)
                .body("code", equalTo("unknown-provider"));
        createJob(Tokens.user("alice"), "k-self", body.replace("[\"fake-b\"]", "[\"fake-a\"]"))
                .then()
                .statusCode(400)
                .body("detail", startsWith("'fallback' must name each provider once"));
        createJob(Tokens.user("alice"), "k-null", body.replace("[\"fake-b\"]", "[null]"))
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"));
        createJob(Tokens.user("alice"), "k-type", body.replace("[\"fake-b\"]", "\"fake-b\""))
                .then()
                .statusCode(400)
                .body("code", equalTo("invalid-request"))
                .body("winningAttemptId", nullValue());
        assertThat(count("SELECT count(*) FROM job")).isEqualTo(2);
    }
}
