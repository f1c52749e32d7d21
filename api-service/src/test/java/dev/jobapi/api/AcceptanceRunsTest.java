package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.common.acceptance.AcceptanceRuns;
import dev.jobapi.common.acceptance.AcceptanceState;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The conditional updates of provider_acceptance held to {@link AcceptanceState}'s table: from every
 * source state (a running run with a live lease and with one that ran out), each operation either
 * leaves the run alone or makes a move the table allows, and every move the table allows is made by
 * one of them. One pending run per provider is a constraint, under concurrent requests too.
 */
@QuarkusTest
class AcceptanceRunsTest extends ApiTestSupport {

    private static final String HOLDER = "worker-holding";

    @Inject
    AcceptanceRuns acceptances;

    private record Source(AcceptanceState state, boolean leaseRanOut) {}

    private UUID aRun(Source source) {
        UUID id = UUID.randomUUID();
        String state = source.state().wireName();
        boolean finished = source.state().isFinished();
        execute("INSERT INTO provider_acceptance (id, provider, state, requested_by, requested_at, started_at,"
                + " finished_at, tasks_total, tasks_done, tasks_passed, lease_owner, lease_expires_at) VALUES ('"
                + id + "', 'fake-b', '" + state + "', 'otto', now() - interval '1 hour', now(), "
                + (finished ? "now()" : "NULL") + ", 2, 2, 2, "
                + (source.state() == AcceptanceState.RUNNING ? "'" + HOLDER + "'" : "NULL") + ", "
                + (source.state() == AcceptanceState.RUNNING
                        ? (source.leaseRanOut() ? "now() - interval '1 minute'" : "now() + interval '1 hour'")
                        : "NULL")
                + ")");
        return id;
    }

    private AcceptanceState stateOf(UUID id) {
        return QuarkusTransaction.requiringNew()
                .call(() -> acceptances.find(id).orElseThrow().state());
    }

    @Test
    void everyOperationFromEverySourceStateMakesOnlyMovesTheTableAllows() {
        List<Source> sources = List.of(
                new Source(AcceptanceState.REQUESTED, false),
                new Source(AcceptanceState.RUNNING, false),
                new Source(AcceptanceState.RUNNING, true),
                new Source(AcceptanceState.PASSED, false),
                new Source(AcceptanceState.FAILED, false));
        List<Consumer<UUID>> operations = List.of(
                id -> acceptances.claim("worker-other", Instant.now(), Duration.ofMinutes(1), 2),
                id -> acceptances.recordTask(id, HOLDER, true, "{}", Duration.ofMinutes(1)),
                id -> acceptances.finish(id, HOLDER, Instant.now()));
        Set<String> movesMade = new TreeSet<>();
        List<String> illegal = new ArrayList<>();
        for (Source source : sources) {
            for (int op = 0; op < operations.size(); op++) {
                resetState();
                UUID id = aRun(source);
                Consumer<UUID> operation = operations.get(op);
                QuarkusTransaction.requiringNew().run(() -> operation.accept(id));
                AcceptanceState after = stateOf(id);
                boolean moved = after != source.state()
                        || count("SELECT count(*) FROM provider_acceptance WHERE lease_owner = 'worker-other'") == 1;
                if (moved) {
                    movesMade.add(source.state() + "->" + after);
                    if (!source.state().canMoveTo(after)) {
                        illegal.add(source + " op " + op + " -> " + after);
                    }
                }
            }
        }
        assertThat(illegal).isEmpty();
        Set<String> allowed = new TreeSet<>();
        for (AcceptanceState from : AcceptanceState.values()) {
            for (AcceptanceState to : EnumSet.allOf(AcceptanceState.class)) {
                if (from.canMoveTo(to)) {
                    allowed.add(from + "->" + to);
                }
            }
        }
        // passed and failed both come from finish: all tasks passed here, so failed is reached below.
        assertThat(movesMade)
                .containsAll(allowed.stream()
                        .filter(m -> !m.equals("RUNNING->FAILED"))
                        .toList());
        resetState();
        UUID none = aRun(new Source(AcceptanceState.RUNNING, false));
        execute("UPDATE provider_acceptance SET tasks_passed = 1 WHERE id = '" + none + "'");
        QuarkusTransaction.requiringNew().run(() -> acceptances.finish(none, HOLDER, Instant.now()));
        assertThat(stateOf(none)).isEqualTo(AcceptanceState.FAILED);
    }

    @Test
    void concurrentRequestsForOneProviderMakeOnePendingRun() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Callable<UUID>> requests = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                requests.add(() -> QuarkusTransaction.requiringNew().call(() -> acceptances
                        .request("fake-b", "otto", Instant.now())
                        .run()
                        .id()));
            }
            Set<UUID> runs = new HashSet<>();
            for (Future<UUID> run : pool.invokeAll(requests)) {
                runs.add(run.get());
            }
            assertThat(runs).hasSize(1);
            assertThat(count("SELECT count(*) FROM provider_acceptance")).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }
}
