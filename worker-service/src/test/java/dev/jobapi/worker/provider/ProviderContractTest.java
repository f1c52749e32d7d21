package dev.jobapi.worker.provider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.fakeprovider.DemoRepository;
import dev.jobapi.fakeprovider.FakeProvider;
import dev.jobapi.fakeprovider.ReceivedRequest;
import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import dev.jobapi.worker.config.WorkerConfig;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The retry decision table (docs/design.md#retry-decision-table), as every adapter must honour it
 * against the fake provider speaking that adapter's wire format. One nested class per kind runs the
 * whole contract, plus what only that API has.
 */
class ProviderContractTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration BACKOFF = Duration.ofMillis(50);
    /** The least two resends can wait: 50ms, then 100ms, each plus jitter. */
    private static final Duration MIN_BACKOFF_OF_TWO_RESENDS = Duration.ofMillis(150);

    /** A deadline no test reaches: the lease of a call that has all the time it needs. */
    private static final Duration LEASE = Duration.ofMinutes(1);
    /** How long after its bound a call may still take to return: the watchdog's wake-up and our own work. */
    private static final Duration MARGIN = Duration.ofMillis(500);
    /** Longer than any bound in these tests: a provider that stalls this long is hung. */
    private static final long HUNG_MS = 8 * READ_TIMEOUT.toMillis();

    private static final byte[] PATCH = DemoRepository.defaultPatch().getBytes(StandardCharsets.UTF_8);

    private static FakeProvider fake;

    /** One announcement of a rate limit, as the adapter made it. */
    record Announced(String provider, Duration delay, String reason) {}

    @BeforeAll
    static void startFake() {
        fake = FakeProvider.start(0);
    }

    @AfterAll
    static void stopFake() {
        fake.stop();
    }

    /** The contract; a subclass names the adapter, its route and its ids. */
    abstract static class Contract {

        /** The adapter under test, configured with {@code model}, pointed at {@code baseUrl}. */
        abstract ModelProvider adapter(String baseUrl, String model);

        /** The route the adapter's API is served at. */
        abstract String path();

        /** How the API's answer ids begin. */
        abstract String idPrefix();

        /** A server error this API sends when it is busy. */
        abstract int busyStatus();

        /** How this API says an answer was cut off at the output limit. */
        abstract String truncationWords();

        final UUID attemptId = UUID.randomUUID();
        final String requestKey = "attempt-" + attemptId;

        /** The rate limits the adapter reported as announced by the provider. */
        final List<Announced> announced = new CopyOnWriteArrayList<>();

        @BeforeEach
        void forgetEarlierRequests() {
            fake.clearScripts();
            announced.clear();
        }

        ProviderOutcome generate(String prompt) {
            return generate(prompt, Instant.now().plus(LEASE), () -> true);
        }

        ProviderOutcome generate(String prompt, Instant deadline, SendGuard guard) {
            return adapter(fake.baseUrl(), "contract-model")
                    .generate(new ProviderRequest(attemptId, requestKey, "contract", prompt, deadline, guard));
        }

        @Test
        void normalAnswerIsCompletedWithPatchUsageAndRemoteIdAndCarriesOurIds() {
            ProviderOutcome outcome = generate("a normal answer");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Completed.class);
            ProviderOutcome.Completed completed = (ProviderOutcome.Completed) outcome;
            ReceivedRequest logged = fake.requests().get(0);
            assertThat(completed.patch()).isEqualTo(PATCH);
            assertThat(completed.usage()).isNotNull();
            assertThat(completed.usage().promptTokens())
                    .isEqualTo(logged.usage().promptTokens());
            assertThat(completed.usage().completionTokens())
                    .isEqualTo(logged.usage().completionTokens());
            assertThat(completed.remoteId()).startsWith(idPrefix()).isEqualTo(logged.remoteId());
            assertThat(logged.path()).isEqualTo(path());
            assertThat(logged.model())
                    .as("the configured model, never the provider name")
                    .isEqualTo("contract-model");
            assertThat(logged.attemptId()).isEqualTo(attemptId.toString());
            assertThat(logged.requestKey()).isEqualTo(requestKey);
            assertThat(logged.stream()).isTrue();
        }

        @Test
        void rateLimitAndServerErrorsBeforeTheFirstTokenAreResentWithBackoffAndTheSameKey() {
            fake.addScript(Script.of("busy", Step.failing(429), Step.failing(busyStatus()), Step.ok()));

            long started = System.nanoTime();
            ProviderOutcome outcome = generate("busy provider");

            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .isGreaterThanOrEqualTo(MIN_BACKOFF_OF_TWO_RESENDS);
            assertThat(outcome).isInstanceOf(ProviderOutcome.Completed.class);
            List<ReceivedRequest> sends = fake.requests();
            assertThat(sends).extracting(ReceivedRequest::status).containsExactly(429, busyStatus(), 200);
            assertThat(sends).extracting(ReceivedRequest::requestKey).containsOnly(requestKey);
        }

        /**
         * Rule 21: a 429 that says when to come back is not resent: the attempt is held, unsent
         * anywhere, and the wait is announced for every worker to honour.
         */
        @Test
        void aRateLimitWithRetryAfterIsHeldAfterOneSendAndItsWaitAnnounced() {
            fake.addScript(Script.of("limited", Step.failing(429).withHeader("retry-after", "7"), Step.ok()));

            ProviderOutcome outcome = generate("limited provider");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Held.class);
            assertThat(outcome.fault())
                    .as("a provider asking to wait is not at fault")
                    .isNull();
            assertThat(fake.requests()).hasSize(1);
            assertThat(announced).singleElement().satisfies(limit -> {
                assertThat(limit.provider()).isEqualTo("contract");
                assertThat(limit.delay()).isEqualTo(Duration.ofSeconds(7));
                assertThat(limit.reason()).contains("429");
            });
        }

        /** Rule 21: an answer whose remaining count is 0 is used, and the wait until its reset announced. */
        @Test
        void anAnswerWithNoRequestsRemainingCompletesAndAnnouncesTheWaitUntilItsReset() {
            fake.addScript(Script.of(
                    "last request",
                    Step.ok()
                            .withHeader("x-ratelimit-remaining-requests", "0")
                            .withHeader("x-ratelimit-reset-requests", "1m30s")
                            .withHeader("anthropic-ratelimit-requests-remaining", "0")
                            .withHeader(
                                    "anthropic-ratelimit-requests-reset",
                                    Instant.now().plusSeconds(90).toString())));

            ProviderOutcome outcome = generate("last request of the minute");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Completed.class);
            assertThat(announced).singleElement().satisfies(limit -> assertThat(limit.delay())
                    .isBetween(Duration.ofSeconds(85), Duration.ofSeconds(90)));
        }

        @Test
        void errorsPastTheSendBoundFailWithoutSpendAfterThreeSends() {
            fake.addScript(Script.of("down", Step.failing(503)));

            ProviderOutcome outcome = generate("provider down");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
            assertThat(failed.reason()).contains("503").contains("after 3 sends");
            assertThat(failed.usageUnknown()).isFalse();
            assertThat(fake.requests()).hasSize(3);
        }

        @Test
        void readTimeoutAfterSendingIsUnknownAndNeverResent() {
            fake.addScript(Script.of("slow", Step.delayed(3 * READ_TIMEOUT.toMillis())));

            ProviderOutcome outcome = generate("slow provider");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Unknown.class);
            assertThat(((ProviderOutcome.Unknown) outcome).reason()).contains("read timeout");
            // Nothing came back before the timeout, not even the headers: no id was known.
            assertThat(outcome.remoteId()).isNull();
            assertThat(fake.requests()).hasSize(1);
        }

        @Test
        void abortAfterTheFirstTokenFailsWithPartialOutputDiscardedAndUsageUnknown() {
            fake.addScript(Script.of("fragile", Step.abortingAfterFirstToken()));

            ProviderOutcome outcome = generate("fragile stream");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
            assertThat(failed.reason()).contains("partial output discarded");
            assertThat(failed.usageUnknown()).isTrue();
            assertThat(failed.remoteId()).isEqualTo(fake.requests().get(0).remoteId());
            assertThat(fake.requests()).hasSize(1);
        }

        @Test
        void clientErrorFailsAtOnceWithTheProvidersMessage() {
            fake.addScript(Script.of("refused", Step.failing(400)));

            ProviderOutcome outcome = generate("refused request");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
            assertThat(failed.reason()).contains("400").contains("Scripted failure: status 400.");
            assertThat(failed.usageUnknown()).isFalse();
            assertThat(fake.requests()).hasSize(1);
        }

        @Test
        void refusedConnectionIsResentThenFailsAsNeverSent() throws IOException {
            int closedPort;
            try (ServerSocket socket = new ServerSocket(0)) {
                closedPort = socket.getLocalPort();
            }
            long started = System.nanoTime();

            ProviderOutcome outcome = adapter("http://127.0.0.1:" + closedPort, "contract-model")
                    .generate(new ProviderRequest(
                            attemptId,
                            requestKey,
                            "contract",
                            "nobody listens",
                            Instant.now().plus(LEASE),
                            () -> true));

            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .isGreaterThanOrEqualTo(MIN_BACKOFF_OF_TWO_RESENDS);
            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
            assertThat(failed.reason()).startsWith("not sent").contains("after 3 sends");
            assertThat(failed.usageUnknown()).isFalse();
            assertThat(failed.remoteId()).isNull();
        }

        @Test
        void errorBodyStallingPastTheDeadlineEndsByTheDeadlineAsUnknownAfterOneSend() {
            // The status line comes after 300ms, so the deadline falls before the read timeout runs out.
            fake.addScript(Script.of(
                    "stalled error", after(300, Step.failing(busyStatus())).stallingBodyFor(HUNG_MS)));
            Instant deadline = Instant.now().plus(READ_TIMEOUT).plusMillis(100);

            ProviderOutcome outcome = generate("stalled error", deadline, () -> true);

            assertThat(Instant.now()).isBefore(deadline.plus(MARGIN));
            assertThat(outcome).isInstanceOf(ProviderOutcome.Unknown.class);
            assertThat(((ProviderOutcome.Unknown) outcome).reason())
                    .contains(String.valueOf(busyStatus()))
                    .contains("stalled past the deadline");
            assertThat(fake.requests()).hasSize(1);
        }

        @Test
        void streamStallingPastTheDeadlineEndsByTheDeadlineAsUnknown() {
            fake.addScript(Script.of("stalled stream", after(300, Step.ok()).stallingBodyFor(HUNG_MS)));
            Instant deadline = Instant.now().plus(READ_TIMEOUT).plusMillis(100);

            ProviderOutcome outcome = generate("stalled stream", deadline, () -> true);

            assertThat(Instant.now()).isBefore(deadline.plus(MARGIN));
            assertThat(outcome).isInstanceOf(ProviderOutcome.Unknown.class);
            assertThat(((ProviderOutcome.Unknown) outcome).reason())
                    .isEqualTo("sent, no whole answer before the deadline");
            assertThat(outcome.remoteId()).isEqualTo(fake.requests().get(0).remoteId());
            assertThat(fake.requests()).hasSize(1);
        }

        @Test
        void resendRefusedByTheGuardIsNeverSentAndTheSentAttemptIsUnknown() {
            fake.addScript(Script.of("withdrawn", Step.failing(busyStatus()), Step.ok()));
            AtomicInteger asked = new AtomicInteger();

            ProviderOutcome outcome = generate("withdrawn", Instant.now().plus(LEASE), () -> {
                asked.incrementAndGet();
                return false;
            });

            assertThat(outcome).isInstanceOf(ProviderOutcome.Unknown.class);
            assertThat(((ProviderOutcome.Unknown) outcome).reason()).contains("withdrawn");
            assertThat(asked).hasValue(1);
            assertThat(fake.requests()).hasSize(1);
        }

        @Test
        void withdrawnAttemptThatNeverReachedTheProviderFailsAsNotSent() throws IOException {
            int closedPort;
            try (ServerSocket socket = new ServerSocket(0)) {
                closedPort = socket.getLocalPort();
            }

            ProviderOutcome outcome = adapter("http://127.0.0.1:" + closedPort, "contract-model")
                    .generate(new ProviderRequest(
                            attemptId,
                            requestKey,
                            "contract",
                            "nobody listens",
                            Instant.now().plus(LEASE),
                            () -> false));

            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            assertThat(((ProviderOutcome.Failed) outcome).reason())
                    .startsWith("not sent")
                    .contains("withdrawn");
        }

        @Test
        void noResendOnceTheDeadlineIsNearerThanTheReadTimeout() {
            // The refusal takes 300ms; by then less than the read timeout is left before the deadline.
            fake.addScript(Script.of("late refusal", after(300, Step.failing(busyStatus())), Step.ok()));
            Instant deadline = Instant.now().plus(READ_TIMEOUT).plusMillis(200);

            ProviderOutcome outcome = generate("late refusal", deadline, () -> true);

            assertThat(Instant.now()).isBefore(deadline);
            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
            assertThat(failed.reason())
                    .contains(String.valueOf(busyStatus()))
                    .contains("no time left to send again before the deadline");
            assertThat(failed.usageUnknown()).isFalse();
            assertThat(fake.requests()).hasSize(1);
        }

        @Test
        void nothingIsSentWhenLessThanTheReadTimeoutIsLeftBeforeTheDeadline() {
            ProviderOutcome outcome = generate(
                    "too late to start", Instant.now().plus(READ_TIMEOUT).minusMillis(100), () -> true);

            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            assertThat(((ProviderOutcome.Failed) outcome).reason()).startsWith("not sent");
            assertThat(fake.requests()).isEmpty();
        }

        @Test
        void truncatedOutputFailsWithTheUsageTheProviderReported() {
            fake.addScript(Script.of("cut off", Step.truncatedAtTheOutputLimit()));

            ProviderOutcome outcome = generate("cut off");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
            ReceivedRequest logged = fake.requests().get(0);
            assertThat(failed.reason()).contains("truncated").contains(truncationWords());
            assertThat(failed.usage()).isNotNull();
            assertThat(failed.usage().promptTokens()).isEqualTo(logged.usage().promptTokens());
            assertThat(failed.usage().completionTokens())
                    .isEqualTo(logged.usage().completionTokens());
            assertThat(failed.usageUnknown()).isFalse();
            assertThat(failed.remoteId()).isEqualTo(logged.remoteId());
            assertThat(fake.requests()).hasSize(1);
        }
    }

    @Nested
    class OpenAi extends Contract {

        /** An OpenAI-compatible server may ignore stream_options.include_usage: a whole answer, no usage. */
        @Test
        void missingUsageIsCompletedWithNullUsage() {
            fake.addScript(Script.of("no usage", Step.withoutUsage()));

            ProviderOutcome outcome = generate("no usage reported");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Completed.class);
            assertThat(((ProviderOutcome.Completed) outcome).usage()).isNull();
            assertThat(((ProviderOutcome.Completed) outcome).patch()).isEqualTo(PATCH);
        }

        @Override
        ModelProvider adapter(String baseUrl, String model) {
            return new OpenAiCompatibleProvider(
                    "contract",
                    new TestProviderSettings(
                            WorkerConfig.Provider.Kind.OPENAI, baseUrl, model, Optional.of("test-key")),
                    TRANSPORT,
                    (provider, wait, reason) -> announced.add(new Announced(provider, wait, reason)),
                    MAPPER,
                    Clock.systemUTC());
        }

        @Override
        String path() {
            return "/v1/chat/completions";
        }

        @Override
        String idPrefix() {
            return "chatcmpl-";
        }

        @Override
        int busyStatus() {
            return 502;
        }

        @Override
        String truncationWords() {
            return "finish_reason length";
        }

        @Test
        void lookupFindsTheStoredCompletionByRemoteIdAndByAttemptId() {
            fake.addScript(Script.of("lost answer", Step.delayed(2 * READ_TIMEOUT.toMillis())));
            ModelProvider adapter = adapter(fake.baseUrl(), "contract-model");
            assertThat(generate("lost answer")).isInstanceOf(ProviderOutcome.Unknown.class);
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> fake.requests().get(0).remoteId() != null);
            String remoteId = fake.requests().get(0).remoteId();

            Optional<ProviderOutcome> byId = adapter.lookup(attemptId, remoteId);
            Optional<ProviderOutcome> byAttempt = adapter.lookup(attemptId, null);

            assertThat(byId).hasValueSatisfying(found -> assertThat(((ProviderOutcome.Completed) found).patch())
                    .isEqualTo(PATCH));
            assertThat(byAttempt)
                    .hasValueSatisfying(found -> assertThat(found.remoteId()).isEqualTo(remoteId));
        }

        @Test
        void lookupOfAnAnswerWhoseBodyHangsFindsNothingWithinTheReadTimeout() {
            // The stored completion stalls when read back, as the stream did.
            fake.addScript(Script.of("hung answer", Step.ok().stallingBodyFor(HUNG_MS)));
            ModelProvider adapter = adapter(fake.baseUrl(), "contract-model");
            assertThat(generate("hung answer")).isInstanceOf(ProviderOutcome.Unknown.class);
            String remoteId = fake.requests().get(0).remoteId();

            long started = System.nanoTime();
            Optional<ProviderOutcome> byId = adapter.lookup(attemptId, remoteId);
            Duration byIdTook = Duration.ofNanos(System.nanoTime() - started);
            started = System.nanoTime();
            Optional<ProviderOutcome> byAttempt = adapter.lookup(attemptId, null);
            Duration byAttemptTook = Duration.ofNanos(System.nanoTime() - started);

            assertThat(byId).isEmpty();
            assertThat(byAttempt).isEmpty();
            assertThat(byIdTook).isLessThan(READ_TIMEOUT.plus(MARGIN));
            assertThat(byAttemptTook).isLessThan(READ_TIMEOUT.plus(MARGIN));
        }

        @Test
        void lookupFindsAStoredAnswerThatWasTruncatedAsFailedWithItsUsage() {
            fake.addScript(Script.of("cut off", Step.truncatedAtTheOutputLimit()));
            assertThat(generate("cut off")).isInstanceOf(ProviderOutcome.Failed.class);

            var found = adapter(fake.baseUrl(), "contract-model")
                    .lookup(attemptId, fake.requests().get(0).remoteId());
            assertThat(found).get().isInstanceOf(ProviderOutcome.Failed.class);
            ProviderOutcome.Failed failed = (ProviderOutcome.Failed) found.orElseThrow();
            assertThat(failed.reason()).contains("output limit");
            assertThat(failed.usage()).isNotNull(); // paid for: the tokens reach the ledger
        }
    }

    @Nested
    class Anthropic extends Contract {

        /**
         * Anthropic reports usage in every message; it goes missing only when the stream breaks after the
         * text and before message_delta. The text may look whole, but without message_stop it is not.
         */
        @Test
        void aStreamThatBreaksBeforeMessageDeltaFailsWithUsageUnknown() {
            fake.addScript(Script.of("no usage", Step.withoutUsage()));

            ProviderOutcome outcome = generate("no usage reported");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            ProviderOutcome.Failed failed = (ProviderOutcome.Failed) outcome;
            assertThat(failed.usageUnknown()).isTrue();
            assertThat(failed.usage()).isNull();
            assertThat(failed.reason()).contains("partial output discarded");
            assertThat(fake.requests()).hasSize(1);
        }

        @Override
        ModelProvider adapter(String baseUrl, String model) {
            return new AnthropicProvider(
                    "contract",
                    new TestProviderSettings(
                            WorkerConfig.Provider.Kind.ANTHROPIC, baseUrl, model, Optional.of("test-key")),
                    TRANSPORT,
                    (provider, wait, reason) -> announced.add(new Announced(provider, wait, reason)),
                    MAPPER,
                    Clock.systemUTC());
        }

        @Override
        String path() {
            return "/v1/messages";
        }

        @Override
        String idPrefix() {
            return "msg_";
        }

        @Override
        int busyStatus() {
            return 529;
        }

        @Override
        String truncationWords() {
            return "stop_reason max_tokens";
        }

        @Test
        void errorEventInTheStreamFailsWithTheProvidersErrorType() {
            fake.addScript(Script.of("overloaded mid-stream", Step.abortingAfterFirstToken()));

            ProviderOutcome outcome = generate("overloaded mid-stream");

            assertThat(outcome).isInstanceOf(ProviderOutcome.Failed.class);
            assertThat(((ProviderOutcome.Failed) outcome).reason()).contains("overloaded_error");
        }

        @Test
        void lookupHasNothingToFindBecauseTheApiKeepsNoMessages() {
            assertThat(generate("a normal answer")).isInstanceOf(ProviderOutcome.Completed.class);

            assertThat(adapter(fake.baseUrl(), "contract-model")
                            .lookup(attemptId, fake.requests().get(0).remoteId()))
                    .isEmpty();
        }
    }

    /** {@code step} with its answer starting only after {@code delayMs}. */
    private static Step after(long delayMs, Step step) {
        return new Step(
                step.status(),
                delayMs,
                step.abortAfterFirstToken(),
                step.omitUsage(),
                step.patch(),
                step.callbackAfterMs(),
                step.stallMs(),
                step.truncated(),
                step.headers());
    }

    private static final WorkerConfig.Providers TRANSPORT =
            new TestTransport(Duration.ofSeconds(1), READ_TIMEOUT, 3, BACKOFF, 4 * 1024 * 1024);
}
