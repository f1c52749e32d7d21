package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.testing.SpanTree;
import dev.jobapi.common.tracing.TraceAttributes;
import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.common.QuarkusTestResource;
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
 * The worker's half of one trace from {@code POST /jobs} to the apply: a message whose headers carry
 * a {@code traceparent}, as the api's relay publishes it ({@code dev.jobapi.api.TracingTest} shows
 * the POST's trace reaching that header), is worked in that trace: the delivery's consumer span is a
 * child of the publish named there, and claim, provider call, record, election, apply and ack are
 * its children, each naming the job and the attempt. Together the two tests prove one trace across
 * both processes.
 */
@QuarkusTest
@TestProfile(TracingProfile.class)
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class TracingTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    /** The trace and the publish span a relay would have named (the W3C specification's example). */
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

    private static final String PUBLISH_SPAN_ID = "00f067aa0ba902b7";

    private static final List<String> STEPS = List.of(
            "attempt.claim", "provider.call", "attempt.record", "attempt.elect", "attempt.apply", "message.ack");

    @Inject
    InMemorySpanExporter spans;

    @BeforeEach
    void forgetEarlierSpans() {
        spans.reset();
    }

    @Test
    void messageCarryingATraceparentIsWorkedInThatTraceFromClaimToAck() {
        // A price in force, so the record step's span carries what the call cost.
        execute("INSERT INTO provider_price (provider, model, input_usd_per_mtok, output_usd_per_mtok,"
                + " effective_from, set_by, reason) VALUES ('fake-a', 'fake-a', 3, 15,"
                + " now() - interval '1 minute', 'otto', 'test')");
        UUID job = aJob("traced path");
        UUID attempt = aStartingAttempt(job, "fake-a");
        publishRaw(
                "{\"attemptId\":\"" + attempt + "\",\"jobId\":\"" + job + "\"}",
                Map.of("traceparent", "00-" + TRACE_ID + "-" + PUBLISH_SPAN_ID + "-01"));
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));

        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(inTrace().stream().map(SpanData::getName))
                        .contains("process jobs.attempts")
                        .containsAll(STEPS));
        SpanData process = named("process jobs.attempts");
        assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(process.getParentSpanId()).isEqualTo(PUBLISH_SPAN_ID);
        assertNames(process, job, attempt);
        for (String step : STEPS) {
            SpanData span = named(step);
            assertThat(span.getParentSpanId()).as(step).isEqualTo(process.getSpanId());
            assertNames(span, job, attempt);
        }

        SpanData call = named("provider.call");
        assertThat(call.getAttributes().get(TraceAttributes.PROVIDER)).isEqualTo("fake-a");
        assertThat(call.getAttributes().get(TraceAttributes.MODEL)).isEqualTo("fake-a");
        assertThat(call.getAttributes().get(TraceAttributes.OUTCOME)).isEqualTo("completed");
        assertThat(call.getAttributes().get(TraceAttributes.TOKENS_IN))
                .isEqualTo(count("SELECT prompt_tokens FROM usage_record WHERE attempt_id = '" + attempt + "'"));
        assertThat(call.getAttributes().get(TraceAttributes.TOKENS_OUT))
                .isEqualTo(count("SELECT completion_tokens FROM usage_record WHERE attempt_id = '" + attempt + "'"));

        double cost = Double.parseDouble(text("SELECT cost_usd FROM attempt WHERE id = '" + attempt + "'"));
        assertThat(cost).isPositive();
        assertThat(named("attempt.record").getAttributes().get(TraceAttributes.COST_USD))
                .isEqualTo(cost);

        assertThat(named("attempt.elect").getAttributes().get(TraceAttributes.ELECTED))
                .isTrue();
        SpanData apply = named("attempt.apply");
        assertThat(apply.getAttributes().get(TraceAttributes.APPLY_KEY))
                .isEqualTo(text("SELECT idem_key FROM applied_patch WHERE job_id = '" + job + "'"));
        assertThat(apply.getAttributes().get(TraceAttributes.APPLY_TARGET)).contains(job.toString());
        // The rendering docs/trace-example.md shows.
        System.out.println(SpanTree.render(inTrace()));
    }

    /**
     * The reconciler's work on an attempt belongs to no request: it is a span of its own, linked to
     * the trace the attempt's outbox row kept, naming the job and the attempt.
     */
    @Test
    void lostAnswerFoundByTheReconcilerIsASpanLinkedToTheTraceThatMadeTheAttempt() {
        fake().addScript(Script.of("traced answer lost", Step.delayed(3_000)));
        UUID job = aJob("traced answer lost");
        UUID attempt = aStartingAttempt(job, "fake-a");
        execute("INSERT INTO outbox (attempt_id, job_id, created_at, sent_at, traceparent) VALUES ('" + attempt + "', '"
                + job + "', now(), now(), '00-" + TRACE_ID + "-" + PUBLISH_SPAN_ID + "-01')");
        publish(attempt, job);
        await().atMost(PATIENCE).until(() -> "completed".equals(jobState(job)));

        await().atMost(PATIENCE).untilAsserted(() -> assertThat(spans.getFinishedSpanItems())
                .anyMatch(span -> span.getName().equals("recovery lost-answer lookup")
                        && span.getLinks().stream()
                                .anyMatch(link ->
                                        link.getSpanContext().getTraceId().equals(TRACE_ID))));
        SpanData lookup = spans.getFinishedSpanItems().stream()
                .filter(span -> span.getName().equals("recovery lost-answer lookup"))
                .filter(span -> attempt.toString().equals(span.getAttributes().get(TraceAttributes.ATTEMPT_ID)))
                .findFirst()
                .orElseThrow();
        assertThat(lookup.getTraceId()).isNotEqualTo(TRACE_ID); // its own trace, linked, not a child
        assertNames(lookup, job, attempt);
    }

    private List<SpanData> inTrace() {
        return spans.getFinishedSpanItems().stream()
                .filter(span -> span.getTraceId().equals(TRACE_ID))
                .toList();
    }

    private SpanData named(String name) {
        return inTrace().stream()
                .filter(span -> span.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no span " + name + " in trace " + TRACE_ID));
    }

    private static void assertNames(SpanData span, UUID job, UUID attempt) {
        assertThat(span.getAttributes().get(TraceAttributes.JOB_ID))
                .as(span.getName())
                .isEqualTo(job.toString());
        assertThat(span.getAttributes().get(TraceAttributes.ATTEMPT_ID))
                .as(span.getName())
                .isEqualTo(attempt.toString());
    }
}
