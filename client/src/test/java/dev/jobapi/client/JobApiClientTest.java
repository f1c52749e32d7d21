package dev.jobapi.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.jobapi.client.model.Job;
import dev.jobapi.client.model.JobState;
import dev.jobapi.client.model.NewJob;
import dev.jobapi.client.model.Submitted;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The client's retry rules, key keeping and conditional polling, against a scripted server. */
class JobApiClientTest {

    private static final UUID JOB_ID = UUID.fromString("0b6f1c2e-0000-4000-8000-000000000001");
    private static final NewJob JOB = NewJob.prompt("fix the off-by-one", "demo", "main");

    private final List<Duration> waits = new ArrayList<>();
    private final StubApi api;

    JobApiClientTest() throws IOException {
        api = new StubApi();
    }

    @AfterEach
    void stop() {
        api.close();
    }

    private JobApiClient client(RetryPolicy retries) {
        return client(api.uri(), retries);
    }

    private JobApiClient client(URI uri, RetryPolicy retries) {
        return JobApiClient.builder(uri)
                .token("t")
                .retries(retries)
                .sleeper(waits::add)
                .build();
    }

    private static String job(String state, long version) {
        return "{\"id\":\"" + JOB_ID + "\",\"state\":\"" + state + "\",\"idempotencyKey\":\"k\",\"version\":" + version
                + ",\"attempts\":[],\"actions\":[],\"aFieldFromANewerApi\":1}";
    }

    @Test
    void retriesA503WithTheSameKeyUntilTheJobIsCreated() {
        api.then(503, StubApi.problem(503, "internal"))
                .then(502, "<html>bad gateway</html>")
                .then(201, job("accepted", 0));

        Submitted<Job> submitted = client(RetryPolicy.defaults()).submit(JOB);

        assertThat(submitted.value().state()).isEqualTo(JobState.ACCEPTED);
        assertThat(api.received()).hasSize(3);
        assertThat(api.received())
                .extracting(r -> r.header("Idempotency-Key"))
                .containsOnly(submitted.idempotencyKey());
        assertThat(waits).hasSize(2);
    }

    @Test
    void honoursRetryAfterOnA429() {
        api.then(429, StubApi.problem(429, "too-many-uploads"), Map.of("Retry-After", "3"))
                .then(201, job("accepted", 0));

        client(RetryPolicy.defaults()).submit(JOB);

        assertThat(waits).containsExactly(Duration.ofSeconds(3));
    }

    @Test
    void givesUpWhenRetryAfterIsLongerThanThePolicyAllows() {
        api.then(503, StubApi.problem(503, "internal"), Map.of("Retry-After", "3600"));

        assertThatThrownBy(() -> client(RetryPolicy.defaults()).submit(JOB))
                .isInstanceOf(ApiUnreachableException.class);
        assertThat(api.received()).hasSize(1);
    }

    @Test
    void aDecisionIsNotRetriedAndComesBackTyped() {
        api.then(422, StubApi.problem(422, "idempotency-key-reused"));

        assertThatThrownBy(() -> client(RetryPolicy.defaults()).submit(JOB, "k-1"))
                .isInstanceOfSatisfying(
                        ApiProblem.class, p -> assertThat(p.code()).isEqualTo(ProblemCode.IDEMPOTENCY_KEY_REUSED));
        assertThat(api.received()).hasSize(1);
    }

    @Test
    void aSpentBudgetIsNotRetriedThoughItIsA429() {
        api.then(429, StubApi.problem(429, "budget-exceeded"));

        assertThatThrownBy(() -> client(RetryPolicy.defaults()).submit(JOB))
                .isInstanceOfSatisfying(
                        ApiProblem.class, p -> assertThat(p.code()).isEqualTo(ProblemCode.BUDGET_EXCEEDED));
        assertThat(api.received()).hasSize(1);
    }

    @Test
    void aDeadLetterReplayIsNotRepeatedAfterA500() {
        api.then(500, StubApi.problem(500, "internal"))
                .then(200, "{\"replayed\":1,\"skipped\":0,\"replayedIds\":[\"m\"],\"skippedIds\":[]}");

        assertThatThrownBy(() -> client(RetryPolicy.defaults()).replayDeadLetters(List.of("m")))
                .isInstanceOf(ApiUnreachableException.class);
        assertThat(api.received()).hasSize(1);
    }

    @Test
    void aRefusedConnectionIsRetriedUntilTriesRunOut() throws IOException {
        URI nobody;
        try (ServerSocket socket = new ServerSocket(0)) {
            nobody = URI.create("http://127.0.0.1:" + socket.getLocalPort());
        }

        assertThatThrownBy(() -> client(nobody, RetryPolicy.defaults().withMaxAttempts(3))
                        .replayDeadLetters(List.of("m")))
                .isInstanceOf(ApiUnreachableException.class);
        assertThat(waits).hasSize(2);
    }

    @Test
    void eachTrySendsARequestIdOfItsOwnAndTheProblemNamesTheOneTheApiAnswered() {
        api.then(503, StubApi.problem(503, "server-busy"), Map.of("Retry-After", "1"))
                .then(404, StubApi.problem(404, "job-not-found"), Map.of("X-Request-Id", "api-said-this"));

        assertThatThrownBy(() -> client(RetryPolicy.defaults()).job(JOB_ID))
                .isInstanceOfSatisfying(ApiProblem.class, p -> {
                    assertThat(p.requestId()).isEqualTo("api-said-this");
                    assertThat(p.getMessage()).endsWith("(request api-said-this)");
                });
        List<String> sent =
                api.received().stream().map(r -> r.header("X-Request-Id")).toList();
        assertThat(sent).hasSize(2).doesNotHaveDuplicates().allMatch(id -> UUID.fromString(id) != null);
    }

    @Test
    void noAnswerStillNamesTheLastRequestIdSent() throws IOException {
        URI nobody;
        try (ServerSocket socket = new ServerSocket(0)) {
            nobody = URI.create("http://127.0.0.1:" + socket.getLocalPort());
        }

        assertThatThrownBy(() -> client(nobody, RetryPolicy.defaults().withMaxAttempts(2))
                        .job(JOB_ID))
                .isInstanceOfSatisfying(ApiUnreachableException.class, e -> {
                    assertThat(UUID.fromString(e.requestId())).isNotNull();
                    assertThat(e.getMessage()).endsWith("(last request " + e.requestId() + ")");
                });
    }

    @Test
    void anUnansweredIntentionKeepsItsKeyUntilTheApiDecidesIt() {
        JobApiClient client = client(RetryPolicy.defaults().withMaxAttempts(2));
        api.then(503, StubApi.problem(503, "internal"))
                .then(503, StubApi.problem(503, "internal"))
                .then(201, job("accepted", 0));

        String pending = catchKey(() -> client.submit(JOB));
        Submitted<Job> resumed = client.submit(JOB);
        Submitted<Job> next = client.submit(JOB);

        assertThat(resumed.idempotencyKey()).isEqualTo(pending);
        assertThat(next.idempotencyKey()).isNotEqualTo(pending);
    }

    @Test
    void anotherBodyIsAnotherIntention() {
        api.then(503, StubApi.problem(503, "internal")).then(201, job("accepted", 0));
        JobApiClient client = client(RetryPolicy.none());

        String first = catchKey(() -> client.submit(JOB));
        Submitted<Job> other = client.submit(JOB.withProvider("fake-b"));

        assertThat(other.idempotencyKey()).isNotEqualTo(first);
    }

    @Test
    void awaitTerminalPollsConditionallyOnceTheApiSendsAnEtag() {
        api.then(200, job("running", 1), Map.of("ETag", "\"v1\""))
                .then(304, "")
                .then(304, "")
                .then(200, job("completed", 2), Map.of("ETag", "\"v2\""));
        List<JobState> seen = new ArrayList<>();

        Job done =
                client(RetryPolicy.defaults()).awaitTerminal(JOB_ID, Duration.ofMinutes(1), j -> seen.add(j.state()));

        assertThat(done.state()).isEqualTo(JobState.COMPLETED);
        assertThat(seen).containsExactly(JobState.RUNNING, JobState.COMPLETED);
        assertThat(api.received().subList(1, 4))
                .extracting(r -> r.header("If-None-Match"))
                .containsOnly("\"v1\"");
        // Unchanged polls back off: 200 ms after the change, then 400, then 800.
        assertThat(waits).containsExactly(Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800));
    }

    private static String catchKey(Runnable call) {
        try {
            call.run();
        } catch (ApiUnreachableException e) {
            return e.idempotencyKey();
        }
        throw new AssertionError("expected no answer");
    }

    @Test
    void aLinkToAnotherHostIsRefusedAndTheTokenNeverGoesThere() throws IOException {
        try (StubApi evil = new StubApi()) {
            String elsewhere = evil.uri().getAuthority();
            for (String target :
                    List.of("@" + elsewhere + "/x", "http://" + elsewhere + "/x", "//" + elsewhere + "/x")) {
                try (StubApi hostile = new StubApi()) {
                    hostile.then(200, "[]", Map.of("Link", "<" + target + ">; rel=\"next\""));
                    assertThatThrownBy(() -> client(hostile.uri(), RetryPolicy.defaults())
                                    .timeline(JOB_ID))
                            .as(target)
                            .isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("off this API");
                }
            }
            assertThat(evil.received()).isEmpty();
        }
    }

    @Test
    void aProviderNameStaysInsideItsPathSegment() {
        api.then(202, "{}");

        client(RetryPolicy.defaults()).requestAcceptance("a/../../jobs?x");

        assertThat(api.received().get(0).path()).isEqualTo("/admin/providers/a%2F..%2F..%2Fjobs%3Fx/acceptance");
    }
}
