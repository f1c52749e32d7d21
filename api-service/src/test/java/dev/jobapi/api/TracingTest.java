package dev.jobapi.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.GetResponse;
import dev.jobapi.api.contract.OutsideTheContract;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.testing.SpanTree;
import dev.jobapi.common.tracing.TraceAttributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The api's half of one trace from {@code POST /jobs} to the apply: the request's server span, the
 * outbox row that keeps its trace context, the relay's publish as that trace's producer span (in
 * another thread, later), and the {@code traceparent} header the published message carries. The
 * worker's half ({@code dev.jobapi.worker.TracingTest}) starts from a message carrying a known
 * {@code traceparent}, as this one does, and shows claim, provider call, record, election and apply
 * as spans of that same trace: together they prove one trace across both processes.
 */
@QuarkusTest
@TestProfile(TracingProfile.class)
class TracingTest extends ApiTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(10);

    /** A caller's trace that our spans join only when the caller is known. */
    private static final String SUPPLIED_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

    private static final String SUPPLIED_SPAN = "00f067aa0ba902b7";

    private static final AttributeKey<String> URL_PATH = AttributeKey.stringKey("url.path");

    @Inject
    InMemorySpanExporter spans;

    @BeforeEach
    void forgetEarlierSpans() {
        spans.reset();
    }

    @Test
    void postJobsTraceContinuesThroughTheOutboxRowAndTheRelayIntoTheMessageHeaders() {
        String jobId = createJob(Tokens.user("alice"), "k-traced", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        String attemptId = as(Tokens.user("alice")).get("/jobs/" + jobId).path("attempts[0].id");

        SpanData post = await().atMost(PATIENCE).until(() -> span("POST /jobs"), found -> found != null);
        assertThat(post.getKind()).isEqualTo(SpanKind.SERVER);
        assertThat(post.getAttributes().get(TraceAttributes.JOB_ID)).isEqualTo(jobId);
        assertThat(post.getAttributes().get(TraceAttributes.ATTEMPT_ID)).isEqualTo(attemptId);

        // The row keeps the context of the span that wrote it: the request's.
        assertThat(text("SELECT traceparent FROM outbox WHERE job_id = '" + jobId + "'"))
                .isEqualTo("00-" + post.getTraceId() + "-" + post.getSpanId() + "-01");

        SpanData publish = await().atMost(PATIENCE).until(() -> span("publish jobs.attempts"), found -> found != null);
        assertThat(publish.getKind()).isEqualTo(SpanKind.PRODUCER);
        assertThat(publish.getTraceId()).isEqualTo(post.getTraceId());
        assertThat(publish.getParentSpanId()).isEqualTo(post.getSpanId());
        assertThat(publish.getAttributes().get(TraceAttributes.JOB_ID)).isEqualTo(jobId);
        assertThat(publish.getAttributes().get(TraceAttributes.ATTEMPT_ID)).isEqualTo(attemptId);

        GetResponse message = broker.withChannel(channel -> channel.basicGet(AttemptTopology.QUEUE, true));
        assertThat(message).as("the relay published the attempt's message").isNotNull();
        Map<String, Object> headers = message.getProps().getHeaders();
        assertThat(headers).containsKey("traceparent");
        assertThat(headers.get("traceparent").toString())
                .isEqualTo("00-" + post.getTraceId() + "-" + publish.getSpanId() + "-01");
        // The rendering docs/trace-example.md shows.
        System.out.println(SpanTree.render(spans.getFinishedSpanItems().stream()
                .filter(span -> span.getTraceId().equals(post.getTraceId()))
                .toList()));
    }

    @Test
    @OutsideTheContract("requests without a valid token, which the document answers 401")
    void aTraceparentIsTakenOnlyFromACallerWhoseTokenIsOurs() throws Exception {
        String[][] strangers = {
            {"no token", null},
            {"a token of another key", Tokens.signedWithAnotherKey("mallory")},
            {"an expired token", Tokens.expired("mallory")},
            {"a token breaking a claim rule", Tokens.issuedInTheFuture("mallory")}
        };
        for (String[] stranger : strangers) {
            String path = "/jobs/" + UUID.randomUUID();
            SpanData server = serverSpanOf(path, stranger[1]);
            assertThat(server.getTraceId())
                    .as("%s: a trace of our own", stranger[0])
                    .isNotEqualTo(SUPPLIED_TRACE);
            assertThat(server.getParentSpanContext().isValid())
                    .as("%s: no parent", stranger[0])
                    .isFalse();
        }
        SpanData callback = serverSpanOf("/callbacks/fake-" + UUID.randomUUID(), null);
        assertThat(callback.getTraceId()).as("a callback: a trace of our own").isNotEqualTo(SUPPLIED_TRACE);

        SpanData known = serverSpanOf("/jobs/" + UUID.randomUUID(), Tokens.user("alice"));
        assertThat(known.getTraceId()).as("our user's trace goes on").isEqualTo(SUPPLIED_TRACE);
        assertThat(known.getParentSpanId()).isEqualTo(SUPPLIED_SPAN);
    }

    /** The server span of one request to {@code path} that carried the supplied {@code traceparent}. */
    private SpanData serverSpanOf(String path, String token) {
        var request = given().header("traceparent", "00-" + SUPPLIED_TRACE + "-" + SUPPLIED_SPAN + "-01");
        if (token != null) {
            request = request.auth().oauth2(token);
        }
        if (path.startsWith("/callbacks/")) {
            request.contentType("application/json").body("{}").post(path);
        } else {
            request.get(path);
        }
        return await().atMost(PATIENCE)
                .until(
                        () -> spans.getFinishedSpanItems().stream()
                                .filter(span -> span.getKind() == SpanKind.SERVER)
                                .filter(span -> path.equals(span.getAttributes().get(URL_PATH)))
                                .findFirst()
                                .orElse(null),
                        found -> found != null);
    }

    private SpanData span(String name) {
        List<SpanData> named = spans.getFinishedSpanItems().stream()
                .filter(span -> span.getName().equals(name))
                .toList();
        return named.isEmpty() ? null : named.get(named.size() - 1);
    }
}
