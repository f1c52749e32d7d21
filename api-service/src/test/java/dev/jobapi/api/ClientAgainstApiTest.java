package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.client.ApiProblem;
import dev.jobapi.client.ApiUnreachableException;
import dev.jobapi.client.FileIdempotencyKeys;
import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.ProblemCode;
import dev.jobapi.client.RetryPolicy;
import dev.jobapi.client.model.Attempt;
import dev.jobapi.client.model.AttemptState;
import dev.jobapi.client.model.Job;
import dev.jobapi.client.model.JobState;
import dev.jobapi.client.model.NewJob;
import dev.jobapi.client.model.Submitted;
import dev.jobapi.client.model.TimelineEvent;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java client against this api: the retry with the same key, typed problems, the review verbs. */
@QuarkusTest
class ClientAgainstApiTest extends ApiTestSupport {

    private static final NewJob JOB =
            NewJob.prompt("fix the off-by-one", "demo", "main").withProvider("fake-a");

    @TempDir
    Path keyDirectory;

    private DroppingProxy proxy;

    @BeforeEach
    void startProxy() throws IOException {
        proxy = new DroppingProxy(RestAssured.port);
    }

    @AfterEach
    void stopProxy() throws IOException {
        proxy.close();
    }

    private JobApiClient client(String token, RetryPolicy retries) {
        return JobApiClient.builder(proxy.uri()).token(token).retries(retries).build();
    }

    private static JobApiClient direct(String token) {
        return JobApiClient.builder(URI.create("http://127.0.0.1:" + RestAssured.port))
                .token(token)
                .build();
    }

    @Test
    void aResponseLostAfterTheCommitIsRetriedWithTheSameKeyAndMakesOneJob() {
        JobApiClient alice = client(Tokens.user("alice"), RetryPolicy.defaults());

        proxy.dropNextResponse();
        Submitted<Job> submitted = alice.submit(JOB);

        assertThat(proxy.dropped()).isEqualTo(1);
        assertThat(submitted.replayed()).isTrue();
        assertThat(submitted.value().idempotencyKey()).isEqualTo(submitted.idempotencyKey());
        assertThat(count("SELECT count(*) FROM job WHERE owner_id = 'alice'")).isEqualTo(1);
        assertThat(alice.timeline(submitted.value().id()))
                .extracting(TimelineEvent::kind)
                .contains("job.created", "job.replayed");
    }

    @Test
    void aProcessThatDiedWithoutAnAnswerResumesWithTheKeyItKeptOnDisk() {
        JobApiClient crashed = JobApiClient.builder(proxy.uri())
                .token(Tokens.user("alice"))
                .retries(RetryPolicy.none())
                .idempotencyKeys(new FileIdempotencyKeys(keyDirectory))
                .build();
        proxy.dropNextResponse();
        String kept = catchKey(() -> crashed.submit(JOB));

        JobApiClient rerun = JobApiClient.builder(proxy.uri())
                .token(Tokens.user("alice"))
                .idempotencyKeys(new FileIdempotencyKeys(keyDirectory))
                .build();
        Submitted<Job> resumed = rerun.submit(JOB);

        assertThat(resumed.idempotencyKey()).isEqualTo(kept);
        assertThat(resumed.replayed()).isTrue();
        assertThat(count("SELECT count(*) FROM job WHERE owner_id = 'alice'")).isEqualTo(1);
    }

    @Test
    void aKeyReusedWithAnotherBodyIsATypedProblemAndNotRetried() {
        JobApiClient alice = direct(Tokens.user("alice"));
        alice.submit(JOB, "order-1");

        assertThatThrownBy(() -> alice.submit(JOB.withProvider("fake-b"), "order-1"))
                .isInstanceOfSatisfying(ApiProblem.class, p -> {
                    assertThat(p.code()).isEqualTo(ProblemCode.IDEMPOTENCY_KEY_REUSED);
                    assertThat(p.status()).isEqualTo(422);
                });
    }

    @Test
    void everyProblemCodeOfTheApiIsKnownToTheClient() {
        for (Problem problem : Problem.values()) {
            assertThat(ProblemCode.of(problem.code())).as(problem.code()).isNotEqualTo(ProblemCode.UNRECOGNIZED);
        }
    }

    @Test
    void anotherAttemptWhileTheFirstIsStartingNeedsAReviewerWhoMaySupersedeIt() {
        Job job = direct(Tokens.user("alice")).submit(JOB).value();

        assertThatThrownBy(() -> direct(Tokens.user("alice")).requestAttempt(job.id(), "fake-b"))
                .isInstanceOfSatisfying(
                        ApiProblem.class, p -> assertThat(p.code()).isEqualTo(ProblemCode.REVIEW_REQUIRED));
        Attempt next = direct(Tokens.reviewer("rita"))
                .supersede(job.id(), "fake-b", "fake-a stuck at 09:17")
                .value();

        assertThat(next.provider()).isEqualTo("fake-b");
        assertThat(direct(Tokens.user("alice")).job(job.id()).attempts())
                .extracting(Attempt::state)
                .containsExactly(AttemptState.SUPERSEDED, AttemptState.STARTING);
    }

    @Test
    void theKillSwitchRefusesFallbackWithItsCode() {
        JobApiClient operator = direct(Tokens.of("olga", "operator"));
        String jobId = aliceJobWithFailedFirstAttempt();

        assertThat(operator.setFallback(false, "fake-b returns garbage").enabled())
                .isFalse();
        try {
            assertThatThrownBy(() ->
                            direct(Tokens.user("alice")).requestAttempt(java.util.UUID.fromString(jobId), "fake-b"))
                    .isInstanceOfSatisfying(
                            ApiProblem.class, p -> assertThat(p.code()).isEqualTo(ProblemCode.FALLBACK_DISABLED));
        } finally {
            operator.setFallback(true, null);
        }
    }

    @Test
    void awaitTerminalReturnsOnceTheJobIsCancelled() throws Exception {
        JobApiClient alice = direct(Tokens.user("alice"));
        Job job = alice.submit(JOB).value();
        // The waiter polls a job that is open (no worker runs in these tests) until the cancel lands.
        CompletableFuture<Job> waiting =
                CompletableFuture.supplyAsync(() -> alice.awaitTerminal(job.id(), Duration.ofSeconds(20)));

        assertThat(alice.cancel(job.id()).state()).isEqualTo(JobState.CANCELLED);
        assertThat(waiting.get(20, TimeUnit.SECONDS).state()).isEqualTo(JobState.CANCELLED);
    }

    @Test
    void anotherOwnersJobIsNotFound() {
        Job job = direct(Tokens.user("alice")).submit(JOB).value();

        assertThatThrownBy(() -> direct(Tokens.user("mallory")).job(job.id()))
                .isInstanceOfSatisfying(
                        ApiProblem.class, p -> assertThat(p.code()).isEqualTo(ProblemCode.JOB_NOT_FOUND));
    }

    private static String catchKey(Runnable call) {
        try {
            call.run();
        } catch (ApiUnreachableException e) {
            return e.idempotencyKey();
        }
        throw new AssertionError("expected no answer");
    }
}
