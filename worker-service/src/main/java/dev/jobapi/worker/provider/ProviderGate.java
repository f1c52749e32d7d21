package dev.jobapi.worker.provider;

import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.common.provider.HeldAttempts;
import dev.jobapi.common.provider.ProviderHealth.BreakerState;
import dev.jobapi.worker.config.WorkerConfig;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.hibernate.Session;
import org.jboss.logging.Logger;

/**
 * A provider's health gate (docs/design.md, rule 21), shared by every worker through one row per
 * provider in {@code provider_health}, on the database's clock:
 *
 * <ul>
 *   <li>the circuit breaker: every call's outcome is counted; once the window holds the minimum of
 *       calls and the provider's faults reach the share, it opens. Open, it holds every call until
 *       its retry time; then one attempt's claim takes the probe (half open): its success closes
 *       the breaker and announces the held attempts again, its fault opens it anew;
 *   <li>the rate limit the provider announced (a {@code retry-after}, a remaining count of 0):
 *       every call is held until it ends.
 * </ul>
 *
 * A held attempt stays starting and unclaimed and its message is acknowledged uncounted, as under
 * an operator's pause: no delivery is spent, nothing is failed or dead-lettered. This class's loop
 * announces them again when the gate opens: one for the probe when an open breaker's time is up,
 * all when a breaker closes or a limit ends.
 */
@ApplicationScoped
public class ProviderGate implements AnnouncedLimits {

    private static final Logger LOG = Logger.getLogger(ProviderGate.class);

    /** This loop's thread and heartbeat name. */
    static final String LOOP = "provider-gate";

    /** What a claim may do with its attempt. */
    public sealed interface Verdict {}

    /** The call may go; {@code probe}: it is the half-open breaker's one probe. */
    public record Call(boolean probe) implements Verdict {}

    /** The call is held, for this reason. */
    public record Held(String reason) implements Verdict {}

    private static final Call CALL = new Call(false);

    private final EntityManager em;
    private final HeldAttempts held;
    private final WorkerConfig.ProviderGate settings;
    private final BackgroundLoops loops;
    private final InFlightCaps caps;

    ProviderGate(EntityManager em, HeldAttempts held, WorkerConfig config, BackgroundLoops loops, InFlightCaps caps) {
        this.em = em;
        this.held = held;
        this.caps = caps;
        this.settings = config.providerGate();
        this.loops = loops;
    }

    /**
     * In the claim's transaction: whether this attempt's call may go now. An open breaker whose time
     * is up, or a half-open one whose probe went silent, gives this attempt the probe.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Verdict verdict(String provider, UUID attemptId) {
        return session().doReturningWork(connection -> {
            try (PreparedStatement read = connection.prepareStatement("SELECT state, limited_until,"
                    + " limited_until > statement_timestamp(), limit_reason, retry_at, last_fault, probe_attempt_id"
                    + " FROM provider_health WHERE provider = ?")) {
                read.setString(1, provider);
                try (ResultSet row = read.executeQuery()) {
                    if (!row.next()) {
                        return CALL;
                    }
                    if (row.getBoolean(3)) {
                        return new Held("provider " + provider + " announced a rate limit until "
                                + row.getObject(2, OffsetDateTime.class).toInstant() + " ("
                                + row.getString(4) + ")");
                    }
                    BreakerState state = BreakerState.fromWireName(row.getString(1));
                    if (state == BreakerState.CLOSED) {
                        return CALL;
                    }
                    if (takeProbe(connection, provider, attemptId)) {
                        LOG.infof("Attempt %s probes provider %s's %s breaker", attemptId, provider, state.wireName());
                        return new Call(true);
                    }
                    return new Held(
                            state == BreakerState.OPEN
                                    ? "provider " + provider + "'s circuit breaker is open until "
                                            + row.getObject(5, OffsetDateTime.class)
                                                    .toInstant() + " (last fault: "
                                            + row.getString(6) + ")"
                                    : "provider " + provider + "'s circuit breaker is half open; attempt "
                                            + row.getObject(7) + " probes it");
                }
            }
        });
    }

    /**
     * The attempt took the probe and brought no verdict on the provider's health: its claim did not
     * call (refused for the owner's budget, or found claimed or answered already; in the claim's
     * transaction), or the provider held its call with an announced limit (after the call). The
     * breaker is open again with its time up, so the next round, once no announced limit holds the
     * calls, announces another held attempt for the probe.
     */
    @Transactional
    public void giveBackProbe(String provider, UUID attemptId) {
        em.createNativeQuery("UPDATE provider_health SET state = 'open', retry_at = statement_timestamp(),"
                        + " probe_attempt_id = NULL, probe_claimed_at = NULL, updated_at = statement_timestamp()"
                        + " WHERE provider = ?1 AND state = 'half_open' AND probe_attempt_id = ?2")
                .setParameter(1, provider)
                .setParameter(2, attemptId)
                .executeUpdate();
    }

    private boolean takeProbe(Connection connection, String provider, UUID attemptId) throws SQLException {
        try (PreparedStatement take = connection.prepareStatement("UPDATE provider_health"
                + " SET state = 'half_open', probe_attempt_id = ?, probe_claimed_at = statement_timestamp(),"
                + " updated_at = statement_timestamp() WHERE provider = ?"
                + " AND (state = 'open' AND retry_at <= statement_timestamp()"
                + " OR state = 'half_open' AND (probe_attempt_id = ?"
                + " OR probe_claimed_at < statement_timestamp() - ? * interval '1 millisecond'))")) {
            take.setObject(1, attemptId);
            take.setString(2, provider);
            take.setObject(3, attemptId);
            take.setLong(4, settings.probeTimeout().toMillis());
            return take.executeUpdate() == 1;
        }
    }

    /**
     * After a call, in a transaction of its own: counts its outcome, opens the breaker when the
     * window's faults reach the share, and settles a probe: closed on success (the held attempts
     * announced again), open again on a fault.
     *
     * @param fault the provider's fault, in words; null when the provider answered as a healthy one
     */
    @Transactional(Transactional.TxType.REQUIRES_NEW)
    public void count(String provider, UUID attemptId, String fault) {
        Counted counted = session().doReturningWork(connection -> {
            try (PreparedStatement upsert = connection.prepareStatement("INSERT INTO provider_health AS h"
                    + " (provider, window_started_at, window_calls, window_faults, last_fault, updated_at)"
                    + " VALUES (?, statement_timestamp(), 1, ?, ?, statement_timestamp())"
                    + " ON CONFLICT (provider) DO UPDATE SET"
                    + " window_calls = CASE WHEN h.window_started_at > statement_timestamp() - ? * interval"
                    + " '1 millisecond' THEN h.window_calls + 1 ELSE 1 END,"
                    + " window_faults = CASE WHEN h.window_started_at > statement_timestamp() - ? * interval"
                    + " '1 millisecond' THEN h.window_faults + excluded.window_faults"
                    + " ELSE excluded.window_faults END,"
                    + " window_started_at = CASE WHEN h.window_started_at > statement_timestamp() - ? * interval"
                    + " '1 millisecond' THEN h.window_started_at ELSE statement_timestamp() END,"
                    + " last_fault = coalesce(excluded.last_fault, h.last_fault), updated_at = statement_timestamp()"
                    + " RETURNING state, window_calls, window_faults, probe_attempt_id IS NOT DISTINCT FROM ?")) {
                long window = settings.window().toMillis();
                upsert.setString(1, provider);
                upsert.setInt(2, fault == null ? 0 : 1);
                upsert.setString(3, fault);
                upsert.setLong(4, window);
                upsert.setLong(5, window);
                upsert.setLong(6, window);
                upsert.setObject(7, attemptId);
                try (ResultSet row = upsert.executeQuery()) {
                    row.next();
                    return new Counted(
                            BreakerState.fromWireName(row.getString(1)),
                            row.getInt(2),
                            row.getInt(3),
                            row.getBoolean(4));
                }
            }
        });
        if (counted.state() == BreakerState.HALF_OPEN && counted.probe()) {
            if (fault == null) {
                close(provider, attemptId);
            } else {
                open(provider, "probe_attempt_id = ?", attemptId, fault);
            }
        } else if (counted.state() == BreakerState.CLOSED
                && fault != null
                && counted.calls() >= settings.minimumCalls()
                && counted.faults() * 100L >= (long) settings.faultPercent() * counted.calls()) {
            open(provider, "state = 'closed'", null, fault);
        }
    }

    private record Counted(BreakerState state, int calls, int faults, boolean probe) {}

    /** Opens the provider's breaker for the open time, when {@code condition} (on the probe, if given) holds. */
    private void open(String provider, String condition, UUID probe, String fault) {
        boolean opened = session().doReturningWork(connection -> {
            try (PreparedStatement update = connection.prepareStatement("UPDATE provider_health SET state = 'open',"
                    + " opened_at = statement_timestamp(),"
                    + " retry_at = statement_timestamp() + ? * interval '1 millisecond',"
                    + " probe_attempt_id = NULL, probe_claimed_at = NULL, updated_at = statement_timestamp()"
                    + " WHERE provider = ? AND " + condition)) {
                update.setLong(1, settings.openFor().toMillis());
                update.setString(2, provider);
                if (probe != null) {
                    update.setObject(3, probe);
                }
                return update.executeUpdate() == 1;
            }
        });
        if (opened) {
            LOG.warnf("Provider %s's circuit breaker opened for %s: %s", provider, settings.openFor(), fault);
        }
    }

    private void close(String provider, UUID probe) {
        int closed = em.createNativeQuery("UPDATE provider_health SET state = 'closed', opened_at = NULL,"
                        + " retry_at = NULL, probe_attempt_id = NULL, probe_claimed_at = NULL,"
                        + " window_started_at = statement_timestamp(), window_calls = 0, window_faults = 0,"
                        + " updated_at = statement_timestamp() WHERE provider = ?1 AND probe_attempt_id = ?2")
                .setParameter(1, provider)
                .setParameter(2, probe)
                .executeUpdate();
        if (closed == 1) {
            LOG.infof(
                    "Provider %s's circuit breaker closed after probe %s; %d held attempts announced again",
                    provider, probe, announceIfCallable(provider));
        }
    }

    /** Announces every held attempt of the provider, unless an announced limit still holds them. */
    private int announceIfCallable(String provider) {
        boolean limited = !em.createNativeQuery("SELECT 1 FROM provider_health WHERE provider = ?1"
                        + " AND limited_until > statement_timestamp()")
                .setParameter(1, provider)
                .getResultList()
                .isEmpty();
        return limited ? 0 : held.announceAgain(provider, Integer.MAX_VALUE);
    }

    /** Holds the provider's calls for {@code wait} (at most the longest limit), for the reason given. */
    @Override
    @Transactional(Transactional.TxType.REQUIRES_NEW)
    public void announced(String provider, Duration wait, String reason) {
        Duration held = wait.compareTo(settings.longestLimit()) > 0 ? settings.longestLimit() : wait;
        session().doWork(connection -> {
            try (PreparedStatement upsert = connection.prepareStatement("INSERT INTO provider_health AS h"
                    + " (provider, window_started_at, limited_until, limit_reason, updated_at)"
                    + " VALUES (?, statement_timestamp(), statement_timestamp() + ? * interval '1 millisecond', ?,"
                    + " statement_timestamp()) ON CONFLICT (provider) DO UPDATE SET"
                    + " limited_until = greatest(h.limited_until, excluded.limited_until),"
                    + " limit_reason = excluded.limit_reason, updated_at = statement_timestamp()")) {
                upsert.setString(1, provider);
                upsert.setLong(2, held.toMillis());
                upsert.setString(3, reason);
                upsert.executeUpdate();
            }
        });
        LOG.infof("Provider %s announced a rate limit; its calls wait %s: %s", provider, held, reason);
    }

    void expectHeartbeat(@Observes StartupEvent event) {
        loops.expect(LOOP, Duration.ofSeconds(2), Duration.ofMinutes(1));
    }

    /** Every two seconds on every worker: announces what a gate that opened again may now call. */
    @Scheduled(
            identity = LOOP,
            every = "2s",
            delayed = "2s",
            concurrentExecution = ConcurrentExecution.SKIP,
            skipExecutionIf = BackgroundLoops.class)
    void scheduledRound() {
        loops.round(LOOP, () -> QuarkusTransaction.requiringNew().run(this::reopen));
    }

    /**
     * One round: an open breaker whose time is up, or a half-open one whose probe went silent, gets
     * one held attempt announced again, for its probe; a provider whose announced limit ended and
     * whose breaker is closed gets every held attempt announced again; capped providers and owners
     * get as many announced again as they have free slots ({@link InFlightCaps}). Rows another
     * worker's round holds are skipped.
     */
    void reopen() {
        @SuppressWarnings("unchecked")
        List<String> probeDue = em.createNativeQuery("SELECT provider FROM provider_health"
                        + " WHERE coalesce(limited_until <= statement_timestamp(), true)"
                        + " AND (state = 'open' AND retry_at <= statement_timestamp()"
                        + " OR state = 'half_open' AND probe_claimed_at < statement_timestamp() - ?1 * interval"
                        + " '1 millisecond') FOR UPDATE SKIP LOCKED")
                .setParameter(1, settings.probeTimeout().toMillis())
                .getResultList();
        for (String provider : probeDue) {
            held.announceAgain(provider, 1);
        }
        caps.announceFreed();
        @SuppressWarnings("unchecked")
        List<Object[]> limitsEnded = em.createNativeQuery("UPDATE provider_health h SET limited_until = NULL,"
                        + " limit_reason = NULL, updated_at = statement_timestamp() WHERE provider IN (SELECT provider"
                        + " FROM provider_health WHERE limited_until <= statement_timestamp() FOR UPDATE SKIP LOCKED)"
                        + " RETURNING provider, state")
                .getResultList();
        List<String> reopened = new ArrayList<>();
        for (Object[] row : limitsEnded) {
            String provider = (String) row[0];
            // Behind a breaker that is not closed, its probe sends them on.
            if (BreakerState.fromWireName((String) row[1]) == BreakerState.CLOSED) {
                reopened.add(provider + " (" + held.announceAgain(provider, Integer.MAX_VALUE) + " announced again)");
            }
        }
        if (!reopened.isEmpty()) {
            LOG.infof("Announced rate limits ended: %s", reopened);
        }
    }

    private Session session() {
        return em.unwrap(Session.class);
    }
}
