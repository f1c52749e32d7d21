package dev.jobapi.common.acceptance;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Query;
import jakarta.transaction.Transactional;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The acceptance runs of providers (docs/design.md, rule 12): operators request them through the
 * API, workers claim and run them, and automatic fallback reads the latest finished one.
 */
@ApplicationScoped
public class AcceptanceRuns {

    private static final String COLUMNS = "id, provider, state, requested_by, requested_at, started_at, finished_at,"
            + " tasks_total, tasks_done, tasks_passed, CAST(results AS text)";

    private final EntityManager em;

    AcceptanceRuns(EntityManager em) {
        this.em = em;
    }

    /** A requested run, and whether this request made it (false: one was waiting or going already). */
    public record Requested(AcceptanceRun run, boolean created) {}

    /**
     * Asks for a run; a run of this provider that is still requested or running is returned instead.
     * One pending run per provider is the partial unique index provider_acceptance_one_pending: of
     * concurrent requests one inserts, the others find its run.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Requested request(String provider, String operator, Instant now) {
        while (true) {
            @SuppressWarnings("unchecked")
            List<UUID> inserted = em.createNativeQuery(
                            "INSERT INTO provider_acceptance (id, provider, state, requested_by, requested_at)"
                                    + " VALUES (?1, ?2, 'requested', ?3, ?4) ON CONFLICT (provider)"
                                    + " WHERE state IN ('requested', 'running') DO NOTHING RETURNING id")
                    .setParameter(1, UUID.randomUUID())
                    .setParameter(2, provider)
                    .setParameter(3, operator)
                    .setParameter(4, now)
                    .getResultList();
            if (!inserted.isEmpty()) {
                return new Requested(find(inserted.get(0)).orElseThrow(), true);
            }
            Optional<AcceptanceRun> pending = one(
                    "SELECT " + COLUMNS + " FROM provider_acceptance WHERE provider = ?1" + " AND state = ANY(?2)",
                    provider,
                    AcceptanceState.wireNames(state -> !state.isFinished()));
            if (pending.isPresent()) {
                return new Requested(pending.get(), false);
            }
            // The pending run finished between the two statements: ask again.
        }
    }

    public Optional<AcceptanceRun> find(UUID id) {
        return one("SELECT " + COLUMNS + " FROM provider_acceptance WHERE id = ?1", id);
    }

    /** The newest run of the provider, finished or not. */
    public Optional<AcceptanceRun> latest(String provider) {
        return one(
                "SELECT " + COLUMNS
                        + " FROM provider_acceptance WHERE provider = ?1 ORDER BY requested_at DESC LIMIT 1",
                provider);
    }

    /** The newest finished run of the provider: the one automatic fallback goes by. */
    public Optional<AcceptanceRun> latestFinished(String provider) {
        return one(
                "SELECT " + COLUMNS + " FROM provider_acceptance WHERE provider = ?1"
                        + " AND state = ANY(?2) ORDER BY finished_at DESC LIMIT 1",
                provider,
                AcceptanceState.wireNames(AcceptanceState::isFinished));
    }

    /**
     * Why automatic fallback may not move to this provider now, or empty when it may: its newest
     * finished run passed within {@code freshness}.
     */
    public Optional<String> refusal(String provider, Duration freshness, Instant now) {
        Optional<AcceptanceRun> latest = latestFinished(provider);
        if (latest.isEmpty()) {
            return Optional.of("no acceptance run of " + provider + " has finished");
        }
        AcceptanceRun run = latest.get();
        if (run.state() != AcceptanceState.PASSED) {
            return Optional.of("the latest acceptance run of " + provider + " (" + run.id() + ") failed at "
                    + run.finishedAt() + ": " + run.tasksPassed() + " of " + run.tasksTotal() + " tasks passed");
        }
        if (run.finishedAt().isBefore(now.minus(freshness))) {
            return Optional.of("the acceptance of " + provider + " passed at " + run.finishedAt() + ", longer ago than "
                    + freshness);
        }
        return Optional.empty();
    }

    /**
     * Claims the oldest run nobody works on (requested, or running under a lease that ran out), for
     * {@code lease}, to run {@code tasksTotal} tasks. Several workers may ask at once; each run goes
     * to one of them, and a run taken over from a dead worker starts again from its first task.
     * Leases run on the database's clock, so workers whose clocks differ agree on when one ends.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<AcceptanceRun> claim(String worker, Instant now, Duration lease, int tasksTotal) {
        @SuppressWarnings("unchecked")
        List<UUID> claimed = em.createNativeQuery("UPDATE provider_acceptance SET state = 'running',"
                        + " lease_owner = ?1, lease_expires_at = statement_timestamp() + ?2 * interval '1 millisecond',"
                        + " started_at = ?3, tasks_total = ?4, tasks_done = 0, tasks_passed = 0,"
                        + " results = '[]' WHERE id = (SELECT id FROM provider_acceptance"
                        + " WHERE state = 'requested' OR state = 'running' AND lease_expires_at < statement_timestamp()"
                        + " ORDER BY requested_at LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id")
                .setParameter(1, worker)
                .setParameter(2, lease.toMillis())
                .setParameter(3, now)
                .setParameter(4, tasksTotal)
                .getResultList();
        return claimed.stream().findFirst().flatMap(this::find);
    }

    /**
     * Records one finished task of a run this worker holds, and extends its lease.
     *
     * @return false when the run is no longer this worker's (its lease ran out and another worker
     *     took it over): the result is not recorded and the run must stop
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean recordTask(UUID runId, String worker, boolean passed, String resultJson, Duration lease) {
        return em.createNativeQuery("UPDATE provider_acceptance SET tasks_done = tasks_done + 1,"
                                + " tasks_passed = tasks_passed + ?2, results = results || CAST(?3 AS jsonb),"
                                + " lease_expires_at = statement_timestamp() + ?4 * interval '1 millisecond'"
                                + " WHERE id = ?1 AND state = 'running' AND lease_owner = ?5")
                        .setParameter(1, runId)
                        .setParameter(2, passed ? 1 : 0)
                        .setParameter(3, "[" + resultJson + "]")
                        .setParameter(4, lease.toMillis())
                        .setParameter(5, worker)
                        .executeUpdate()
                == 1;
    }

    /** Ends a run this worker holds: passed only when every task passed. */
    @Transactional(Transactional.TxType.MANDATORY)
    public void finish(UUID runId, String worker, Instant now) {
        em.createNativeQuery("UPDATE provider_acceptance SET state = CASE WHEN tasks_total > 0"
                        + " AND tasks_passed = tasks_total THEN 'passed' ELSE 'failed' END, finished_at = ?2,"
                        + " lease_owner = NULL, lease_expires_at = NULL"
                        + " WHERE id = ?1 AND state = 'running' AND lease_owner = ?3")
                .setParameter(1, runId)
                .setParameter(2, now)
                .setParameter(3, worker)
                .executeUpdate();
    }

    private Optional<AcceptanceRun> one(String sql, Object... parameters) {
        Query query = em.createNativeQuery(sql);
        for (int i = 0; i < parameters.length; i++) {
            query.setParameter(i + 1, parameters[i]);
        }
        @SuppressWarnings("unchecked")
        List<Object[]> rows = query.getResultList();
        return rows.stream().findFirst().map(AcceptanceRuns::run);
    }

    private static AcceptanceRun run(Object[] row) {
        return new AcceptanceRun(
                (UUID) row[0],
                (String) row[1],
                AcceptanceState.fromWireName((String) row[2]),
                (String) row[3],
                (Instant) row[4],
                (Instant) row[5],
                (Instant) row[6],
                ((Number) row[7]).intValue(),
                ((Number) row[8]).intValue(),
                ((Number) row[9]).intValue(),
                (String) row[10]);
    }
}
