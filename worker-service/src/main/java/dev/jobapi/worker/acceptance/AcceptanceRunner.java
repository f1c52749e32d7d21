package dev.jobapi.worker.acceptance;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.jobapi.common.acceptance.AcceptanceConfig;
import dev.jobapi.common.acceptance.AcceptanceRun;
import dev.jobapi.common.acceptance.AcceptanceRuns;
import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.worker.acceptance.AcceptanceFixtures.Task;
import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.provider.ProviderRegistry;
import dev.jobapi.worker.provider.ProviderRequest;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Runs the acceptance runs operators request (docs/design.md, rule 12): each fixture task goes to
 * the provider once, its patch is applied to a fresh copy of the fixture repository and checked,
 * and the result is recorded task by task, so progress shows while the run goes.
 */
@ApplicationScoped
public class AcceptanceRunner {

    private static final Logger LOG = Logger.getLogger(AcceptanceRunner.class);

    /** This loop's scheduler identity and heartbeat name. */
    static final String LOOP = "acceptance";

    private final AcceptanceRuns acceptances;
    private final AcceptanceFixtures fixtures;
    private final ProviderRegistry providers;
    private final AcceptanceConfig config;
    private final ObjectMapper mapper;
    private final Clock clock;
    private final String workerId;
    private final BackgroundLoops loops;

    AcceptanceRunner(
            AcceptanceRuns acceptances,
            AcceptanceFixtures fixtures,
            ProviderRegistry providers,
            AcceptanceConfig config,
            WorkerConfig workerConfig,
            ObjectMapper mapper,
            Clock clock,
            BackgroundLoops loops) {
        this.acceptances = acceptances;
        this.loops = loops;
        this.fixtures = fixtures;
        this.providers = providers;
        this.config = config;
        this.mapper = mapper;
        this.clock = clock;
        this.workerId = workerConfig.worker().idOrPid();
    }

    void expectHeartbeat(@Observes StartupEvent event) {
        // A round runs whole acceptance runs, one provider call per fixture task.
        loops.expect(LOOP, config.pollInterval(), Duration.ofMinutes(30));
    }

    /**
     * Every {@code jobapi.acceptance.poll-interval}, the first one interval after start; never two
     * rounds at once in one process (a second run waits for the next round), none once shutdown began.
     */
    @Scheduled(
            identity = LOOP,
            every = "${jobapi.acceptance.poll-interval}",
            delayed = "${jobapi.acceptance.poll-interval}",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledRound() {
        loops.round(LOOP, this::runWaiting);
    }

    private void runWaiting() {
        while (!loops.stopping() && runNext()) {
            // keep going while runs are waiting
        }
    }

    /**
     * Claims and runs one waiting run; false when none was waiting. Once shutdown began it stops
     * before the next task without recording anything more: the run keeps its lease until it runs
     * out, and another worker then takes it over.
     */
    public boolean runNext() {
        int total = fixtures.get().tasks().size();
        Optional<AcceptanceRun> claimed = QuarkusTransaction.requiringNew()
                .call(() -> acceptances.claim(workerId, clock.instant(), config.lease(), total));
        if (claimed.isEmpty()) {
            return false;
        }
        AcceptanceRun run = claimed.get();
        LOG.infof("Acceptance run %s of %s: %d tasks", run.id(), run.provider(), total);
        for (Task task : fixtures.get().tasks()) {
            if (loops.stopping()) {
                LOG.infof("Acceptance run %s left at shutdown; another worker takes it over", run.id());
                return true;
            }
            ObjectNode result = attempt(run, task);
            String json = json(result);
            boolean stillOurs = QuarkusTransaction.requiringNew()
                    .call(() -> acceptances.recordTask(
                            run.id(), workerId, result.get("passed").asBoolean(), json, config.lease()));
            if (!stillOurs) {
                LOG.warnf("Acceptance run %s was taken over by another worker; this one stops", run.id());
                return true;
            }
        }
        QuarkusTransaction.requiringNew().run(() -> acceptances.finish(run.id(), workerId, clock.instant()));
        return true;
    }

    /** One task at the provider: its result as a JSON object for the run's results. */
    private ObjectNode attempt(AcceptanceRun run, Task task) {
        ObjectNode result = mapper.createObjectNode().put("task", task.name());
        // A fresh id per call: acceptance calls are not attempts of any job.
        UUID callId = UUID.randomUUID();
        ProviderRequest request = new ProviderRequest(
                callId,
                "acceptance-" + run.id() + "-" + task.name(),
                run.provider(),
                prompt(run, task),
                clock.instant().plus(config.lease()),
                () -> true);
        ProviderOutcome outcome = providers.forName(run.provider()).generate(request);
        result.put("remoteId", outcome.remoteId());
        Optional<String> failure;
        if (outcome instanceof ProviderOutcome.Completed completed) {
            if (completed.usage() != null) {
                result.put("promptTokens", completed.usage().promptTokens())
                        .put("completionTokens", completed.usage().completionTokens());
            }
            failure = completed.usage() == null
                    ? Optional.of("provider reported no usage (its attempts would be quarantined)")
                    : PatchTrial.judge(
                            fixtures.get().repository(), completed.patch(), task.check(), config.commandTimeout());
        } else if (outcome instanceof ProviderOutcome.Failed failed) {
            failure = Optional.of("provider call failed: " + failed.reason());
        } else if (outcome instanceof ProviderOutcome.Held held) {
            failure = Optional.of("provider asked to wait: " + held.reason());
        } else {
            failure = Optional.of("no answer: " + ((ProviderOutcome.Unknown) outcome).reason());
        }
        result.put("passed", failure.isEmpty());
        failure.ifPresent(reason -> result.put("reason", reason));
        LOG.infof("Acceptance %s %s: %s", run.provider(), task.name(), failure.orElse("passed"));
        return result;
    }

    private String json(ObjectNode node) {
        try {
            return mapper.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The task and the fixture files it is about: what any provider needs to write the patch. */
    private String prompt(AcceptanceRun run, Task task) {
        String files = fixtures.get().repository().entrySet().stream()
                .map(Map.Entry::getKey)
                .collect(Collectors.joining(", "));
        String contents = fixtures.get().repository().entrySet().stream()
                .map(file -> "--- " + file.getKey() + " ---\n" + file.getValue())
                .collect(Collectors.joining("\n"));
        return task.prompt() + "\n\nAnswer with a unified diff against this repository (" + files + "):\n" + contents;
    }
}
