package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.common.acceptance.AcceptanceConfig;
import dev.jobapi.common.acceptance.AcceptanceRuns;
import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import dev.jobapi.worker.acceptance.AcceptanceFixtures;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, rule 12: a provider earns automatic fallback by passing the acceptance fixtures,
 * not by answering.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class AcceptanceRunnerTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    static final String FIX_ADD =
            """
            --- a/src/calc.py
            +++ b/src/calc.py
            @@ -1,2 +1,2 @@
             def add(a, b):
            -    return a - b
            +    return a + b
            """;
    static final String ADD_NOTICE =
            """
            diff --git a/NOTICE b/NOTICE
            new file mode 100644
            --- /dev/null
            +++ b/NOTICE
            @@ -0,0 +1 @@
            +jobapi acceptance
            """;
    static final String RENAME_GREET =
            """
            --- a/src/greeting.py
            +++ b/src/greeting.py
            @@ -1,2 +1,2 @@
            -def greet(name):
            +def greeting(name):
                 return "Hello " + name
            """;

    @Inject
    AcceptanceRuns acceptances;

    @Inject
    AcceptanceFixtures fixtures;

    @Inject
    AcceptanceConfig config;

    @Test
    void providerWhosePatchesPassEveryCheckIsAcceptedAndBecomesEligible() {
        answer("fake-b", "fix-add", FIX_ADD);
        answer("fake-b", "add-notice", ADD_NOTICE);
        answer("fake-b", "rename-greet", RENAME_GREET);

        UUID run = request("fake-b");
        awaitFinished(run);

        assertThat(text("SELECT state FROM provider_acceptance WHERE id = '" + run + "'"))
                .isEqualTo("passed");
        assertThat(text("SELECT tasks_passed || '/' || tasks_total FROM provider_acceptance WHERE id = '" + run + "'"))
                .isEqualTo("3/3");
        // What each task cost, as the provider reported it, is kept with the run.
        assertThat(count("SELECT count(*) FROM provider_acceptance, jsonb_array_elements(results) r WHERE id = '" + run
                        + "' AND (r ->> 'promptTokens')::int > 0"))
                .isEqualTo(3);
        assertThat(refusal("fake-b")).isNull();
    }

    @Test
    void schemaValidAnswersThatFailTheChecksAreNotEnough() {
        // Well-formed diffs, every one: one does not apply, one applies but does the wrong thing,
        // one applies and leaves the old name in place.
        answer("fake-a", "fix-add", FIX_ADD.replace("a - b", "a * b"));
        answer("fake-a", "add-notice", ADD_NOTICE.replace("+jobapi acceptance", "+something else"));
        answer("fake-a", "rename-greet", RENAME_GREET.replace("+def greeting(name):", "+def greet(name):  # renamed"));

        UUID run = request("fake-a");
        awaitFinished(run);

        assertThat(text("SELECT state FROM provider_acceptance WHERE id = '" + run + "'"))
                .isEqualTo("failed");
        assertThat(text("SELECT string_agg(r ->> 'task' || ': ' || (r ->> 'reason'), ' | ' ORDER BY r ->> 'task')"
                        + " FROM provider_acceptance, jsonb_array_elements(results) r WHERE id = '" + run + "'"))
                .contains("add-notice: NOTICE is not the expected content")
                .contains("fix-add: patch does not apply")
                .contains("rename-greet: check command exited 1");
        assertThat(refusal("fake-a")).contains("failed").contains("0 of 3 tasks passed");
    }

    @Test
    void providerThatReportsNoUsageFailsAcceptance() {
        fake().addScript(Script.forModel("fake-b", Step.withoutUsage()));

        UUID run = request("fake-b");
        awaitFinished(run);

        assertThat(text("SELECT state FROM provider_acceptance WHERE id = '" + run + "'"))
                .isEqualTo("failed");
        assertThat(text("SELECT results -> 0 ->> 'reason' FROM provider_acceptance WHERE id = '" + run + "'"))
                .startsWith("provider reported no usage");
    }

    /**
     * Scripts the provider's answer to one task: requests for its model (each fake provider's model is
     * its name) whose prompt holds the task's instruction, the text any provider is sent.
     */
    private void answer(String provider, String task, String patch) {
        String instruction = fixtures.get().tasks().stream()
                .filter(t -> t.name().equals(task))
                .findFirst()
                .orElseThrow()
                .prompt();
        fake().addScript(Script.forModel(provider, instruction, Step.returning(patch)));
    }

    private UUID request(String provider) {
        return QuarkusTransaction.requiringNew().call(() -> acceptances
                .request(provider, "otto", Instant.now())
                .run()
                .id());
    }

    private void awaitFinished(UUID run) {
        await().atMost(PATIENCE).until(() -> Set.of("passed", "failed")
                .contains(text("SELECT state FROM provider_acceptance WHERE id = '" + run + "'")));
    }

    private String refusal(String provider) {
        return QuarkusTransaction.requiringNew().call(() -> acceptances
                .refusal(provider, config.freshness(), Instant.now())
                .orElse(null));
    }

    @Test
    void aLateWorkersResultsNeverCountTowardARunAnotherWorkerTookOver() {
        // The run's lease ran out under a slow worker and "worker-b" took it over.
        UUID run = UUID.randomUUID();
        execute("INSERT INTO provider_acceptance (id, provider, state, requested_by, requested_at, started_at,"
                + " lease_owner, lease_expires_at, tasks_total) VALUES ('" + run + "', 'fake-b', 'running', 'otto',"
                + " now(), now(), 'worker-b', now() + interval '1 minute', 3)");

        boolean recorded = QuarkusTransaction.requiringNew()
                .call(() ->
                        acceptances.recordTask(run, "worker-a", true, "{\"task\":\"late\"}", Duration.ofMinutes(1)));
        QuarkusTransaction.requiringNew().run(() -> acceptances.finish(run, "worker-a", Instant.now()));

        assertThat(recorded).isFalse();
        assertThat(count("SELECT tasks_done FROM provider_acceptance WHERE id = '" + run + "'"))
                .isZero();
        assertThat(text("SELECT state FROM provider_acceptance WHERE id = '" + run + "'"))
                .isEqualTo("running");
        assertThat(QuarkusTransaction.requiringNew()
                        .call(() -> acceptances.recordTask(
                                run, "worker-b", true, "{\"task\":\"t\"}", Duration.ofMinutes(1))))
                .isTrue();
    }
}
