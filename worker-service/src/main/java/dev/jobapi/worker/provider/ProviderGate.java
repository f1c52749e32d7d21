package dev.jobapi.worker.provider;

import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.common.health.BackgroundLoops;
import dev.jobapi.common.provider.HeldAttempts;
import dev.jobapi.common.provider.ProviderHealth;
import dev.jobapi.common.provider.ProviderHealth.BreakerState;
import dev.jobapi.worker.config.WorkerConfig;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.Scheduled.ConcurrentExecution;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.hibernate.Session;
import org.jboss.logging.Logger;

/**
 * A provider's health gate (docs/design.md, rule 21), shared by every worker through one row per
 * provider in {@code provider_health}, on the database's clock:
 *
 * <ul>
 *   <li>the circuit breaker: every call's outcome is counted; once the window holds the minimum of
 *       calls and the provider's faults reach the share, it opens. Open, it holds every call until
 *       its retry time; then claims take its probe calls (half open), judged together: their
 *       faults reaching the share open it anew, enough successes close it and announce the held
 *       attempts again;
 *   <li>the rate limit the provider announced (a {@code retry-after}, a remaining count of 0):
 *       every call is held until it ends.
 * </ul>
 *
 * A held attempt stays starting and unclaimed and its message is acknowledged uncounted, as under
 * an operator's pause: no delivery is spent, nothing is failed or dead-lettered. This class's loop
 * announces them again when the gate opens: one for each free probe call of a breaker whose open
 * time is up, all when a breaker closes or a limit ends.
 */
@Singleton
public class ProviderGate implements AnnouncedLimits {

    private static final Logger LOG = Logger.getLogger(ProviderGate.class);

    /** This loop's thread and heartbeat name. */
    static final String LOOP = "provider-gate";

    /** What a claim may do with its attempt. */
    public sealed interface Verdict {}

    /** The call may go; {@code probe}: it is the half-open breaker's one probe. */
    public record Call(boolean probe) implements Verdict {}

    /** The call is held, for this reason. */
    public record Held(HoldCause cause, String reason) implements Verdict {}

    private static final Call CALL = new Call(false);

    /**
     * A probe that will bring no verdict, in the gate's round: its attempt's call is no longer in
     * flight with its outcome uncounted (its worker died before counting it, and the lease ran out;
     * or the provider held it and it was handed back unclaimed), or it was taken longer ago than the
     * probe timeout. The call is counted before its answer is recorded, so an ended probe never looks
     * abandoned while it waits to be counted. A held
     * attempt probes in its place. Waiting for the timeout alone held every call of the provider for
     * 5 minutes after a worker died holding the probe (CI's soak, seed 42: 847 attempts held).
     * Parameter ?2 is the probe timeout in milliseconds.
     */
    private static final String PROBE_ABANDONED = "(p.claimed_at < statement_timestamp() - ?2 * interval"
            + " '1 millisecond' OR NOT EXISTS (SELECT 1 FROM attempt a WHERE a.id = p.attempt_id AND "
            + ProviderHealth.IN_FLIGHT + "))";

    private final EntityManager em;
    private final CurrentTransaction transaction;
    private final HeldAttempts held;
    private final WorkerConfig.ProviderGate settings;
    private final Map<String, WorkerConfig.Provider> providers;
    private final BackgroundLoops loops;
    private final InFlightCaps caps;

    /** Healthy calls that were no probe, ended on this worker and not yet counted ({@link #ended}). */
    private final ConcurrentHashMap<String, AtomicInteger> uncountedSuccesses = new ConcurrentHashMap<>();

    /** Whether this worker's configured limits are written yet ({@link #publishLimits}). */
    private volatile boolean limitsPublished;

    ProviderGate(
            EntityManager em,
            CurrentTransaction transaction,
            HeldAttempts held,
            WorkerConfig config,
            BackgroundLoops loops,
            InFlightCaps caps) {
        this.em = em;
        this.transaction = transaction;
        this.held = held;
        this.caps = caps;
        this.settings = config.providerGate();
        if (settings.probeCalls() < 1) {
            // None would leave an open breaker holding every call for good.
            throw new IllegalArgumentException(
                    "jobapi.provider-gate.probe-calls must be at least 1, not " + settings.probeCalls());
        }
        this.providers = config.provider();
        this.loops = loops;
    }

    /**
     * The provider's row of {@code provider_health} as the claim read it, with its other conditions
     * in one statement (the worker's {@code ClaimConditions}); {@code limitedNow}: its announced
     * limit holds at the database's time of the read.
     */
    public record Health(
            String state,
            OffsetDateTime limitedUntil,
            boolean limitedNow,
            String limitReason,
            OffsetDateTime retryAt,
            String lastFault) {}

    /** The columns of {@link Health}, in its order, of the provider's row aliased {@code h}. */
    public static final String HEALTH_COLUMNS = "h.state, h.limited_until, h.limited_until > statement_timestamp(),"
            + " h.limit_reason, h.retry_at, h.last_fault";

    /**
     * In the claim's transaction, plain or JTA: whether this attempt's call may go now, by the provider's
     * {@code health} as read (empty: no call of it counted yet). An open breaker whose time is up,
     * or a half-open one with a probe call left, gives this attempt a probe. A call that may go is
     * counted in the provider's minute when it has a per-minute limit, at {@code tokensAtMost}; one
     * that does not fit holds the provider's calls until the next minute.
     */
    public Verdict verdict(String provider, UUID attemptId, long tokensAtMost, Optional<Health> health) {
        return transaction.onConnection(connection -> {
            if (health.isEmpty()) {
                return countInMinute(connection, provider, tokensAtMost, false, attemptId);
            }
            Health row = health.get();
            if (row.limitedNow()) {
                return new Held(
                        HoldCause.RATE_LIMIT,
                        "provider " + provider + "'s calls are held until "
                                + row.limitedUntil().toInstant() + " (" + row.limitReason() + ")");
            }
            BreakerState state = BreakerState.fromWireName(row.state());
            if (state == BreakerState.CLOSED) {
                return countInMinute(connection, provider, tokensAtMost, false, attemptId);
            }
            if (takeProbe(connection, provider, attemptId)) {
                LOG.infof("Attempt %s probes provider %s's %s breaker", attemptId, provider, state.wireName());
                return countInMinute(connection, provider, tokensAtMost, true, attemptId);
            }
            return new Held(
                    HoldCause.BREAKER,
                    state == BreakerState.OPEN
                            ? "provider " + provider + "'s circuit breaker is open until "
                                    + row.retryAt().toInstant() + " (last fault: " + row.lastFault() + ")"
                            : "provider " + provider + "'s circuit breaker is half open and its "
                                    + settings.probeCalls() + " probe calls are taken");
        });
    }

    /**
     * The provider's per-minute limits (rule 21): counts the call in the current UTC minute by one
     * conditional upsert that succeeds only while it fits both limits, or, when it does not, holds
     * the provider's calls until the next minute (a probe taken is given back). A call whose own
     * bound passes the token limit goes alone, first in its minute: held, it would never go.
     */
    private Verdict countInMinute(
            Connection connection, String provider, long tokensAtMost, boolean probe, UUID attemptId)
            throws SQLException {
        WorkerConfig.Provider configured = providers.get(provider);
        Integer requestsPerMinute =
                configured == null ? null : configured.requestsPerMinute().orElse(null);
        Integer tokensPerMinute =
                configured == null ? null : configured.tokensPerMinute().orElse(null);
        if (requestsPerMinute == null && tokensPerMinute == null) {
            return probe ? new Call(true) : CALL;
        }
        String thisMinute = "date_trunc('minute', statement_timestamp())";
        String sameMinute = "h.rate_minute = " + thisMinute;
        try (PreparedStatement count = connection.prepareStatement("INSERT INTO provider_health AS h"
                + " (provider, window_started_at, rate_minute, minute_requests, minute_tokens, updated_at)"
                + " VALUES (?, statement_timestamp(), " + thisMinute + ", 1, ?, statement_timestamp())"
                + " ON CONFLICT (provider) DO UPDATE SET"
                + " minute_requests = CASE WHEN " + sameMinute + " THEN h.minute_requests + 1 ELSE 1 END,"
                + " minute_tokens = CASE WHEN " + sameMinute + " THEN h.minute_tokens ELSE 0 END"
                + " + excluded.minute_tokens,"
                + " rate_minute = " + thisMinute + ", updated_at = statement_timestamp()"
                + " WHERE NOT " + sameMinute
                + " OR (?::integer IS NULL OR h.minute_requests + 1 <= ?::integer)"
                + " AND (?::integer IS NULL OR h.minute_tokens = 0 OR h.minute_tokens + excluded.minute_tokens"
                + " <= ?::integer)")) {
            count.setString(1, provider);
            count.setLong(2, tokensAtMost);
            count.setObject(3, requestsPerMinute, Types.INTEGER);
            count.setObject(4, requestsPerMinute, Types.INTEGER);
            count.setObject(5, tokensPerMinute, Types.INTEGER);
            count.setObject(6, tokensPerMinute, Types.INTEGER);
            if (count.executeUpdate() == 1) {
                return probe ? new Call(true) : CALL;
            }
        }
        String reason = "its configured limit of "
                + (requestsPerMinute == null ? "" : requestsPerMinute + " requests")
                + (requestsPerMinute != null && tokensPerMinute != null ? " and " : "")
                + (tokensPerMinute == null ? "" : tokensPerMinute + " tokens")
                + " per minute is used";
        try (PreparedStatement hold = connection.prepareStatement("UPDATE provider_health"
                + " SET limited_until = date_trunc('minute', statement_timestamp()) + interval '1 minute',"
                + " limit_reason = ?, updated_at = statement_timestamp() WHERE provider = ?"
                + " AND coalesce(limited_until, '-infinity') < date_trunc('minute', statement_timestamp())"
                + " + interval '1 minute'")) {
            hold.setString(1, reason);
            hold.setString(2, provider);
            hold.execute();
        }
        if (probe) {
            giveBackProbe(connection, attemptId);
        }
        return new Held(
                HoldCause.RATE_LIMIT,
                "provider " + provider + "'s calls are held until the next minute (" + reason + ")");
    }

    /** The probe taken by a claim that holds its attempt after all: free for a held attempt. */
    private static void giveBackProbe(Connection connection, UUID attemptId) throws SQLException {
        try (PreparedStatement delete =
                connection.prepareStatement("DELETE FROM provider_probe WHERE attempt_id = ?")) {
            delete.setObject(1, attemptId);
            delete.executeUpdate();
        }
    }

    /**
     * Takes one of a half-open breaker's probe calls for the attempt (an open breaker whose time is up
     * goes half open with all of them free), or finds the attempt holds one already (its message came
     * again). The row's lock comes first, in a statement of its own: the count of probes taken, in
     * the next, then sees every probe committed before it. Counted in the locking statement, it read
     * the statement's older snapshot, and claims waiting on the lock each took "the" probe: eight in
     * one second in a soak.
     */
    private boolean takeProbe(Connection connection, String provider, UUID attemptId) throws SQLException {
        int counted;
        try (PreparedStatement halfOpen = connection.prepareStatement("UPDATE provider_health SET"
                + " probe_calls = CASE WHEN state = 'open' THEN 0 ELSE probe_calls END,"
                + " probe_faults = CASE WHEN state = 'open' THEN 0 ELSE probe_faults END,"
                + " state = 'half_open', updated_at = statement_timestamp() WHERE provider = ?"
                + " AND (state = 'open' AND retry_at <= statement_timestamp() OR state = 'half_open')"
                + " RETURNING probe_calls")) {
            halfOpen.setString(1, provider);
            try (ResultSet row = halfOpen.executeQuery()) {
                if (!row.next()) {
                    return false;
                }
                counted = row.getInt(1);
            }
        }
        try (PreparedStatement take = connection.prepareStatement(
                "WITH taken AS (INSERT INTO provider_probe"
                        + " (attempt_id, provider, claimed_at) SELECT ?, ?, statement_timestamp()"
                        + " WHERE (SELECT count(*) FROM provider_probe WHERE provider = ?) + ? < ?"
                        + " ON CONFLICT (attempt_id) DO NOTHING RETURNING attempt_id)"
                        + " SELECT EXISTS (SELECT 1 FROM taken) OR EXISTS (SELECT 1 FROM provider_probe WHERE attempt_id = ?)")) {
            take.setObject(1, attemptId);
            take.setString(2, provider);
            take.setString(3, provider);
            take.setInt(4, counted);
            take.setInt(5, settings.probeCalls());
            take.setObject(6, attemptId);
            try (ResultSet row = take.executeQuery()) {
                row.next();
                return row.getBoolean(1);
            }
        }
    }

    /**
     * After a call: counts its outcome. A healthy call that was no probe is only tallied on this
     * worker, and the tally goes into the provider's row with this worker's next fault or probe of
     * that provider, or in the gate's next round (2 s). Written one by one, every worker's every call
     * waited its turn on that one row and cost a commit of its own. Counting late only delays
     * successes: the breaker may judge a window's faults against fewer calls than were made and open
     * up to a round early, never late. A crash loses at most a round's successes.
     *
     * @param fault the provider's fault, in words; null when the provider answered as a healthy one
     * @param probe whether the call was a probe of the provider's half-open breaker ({@link Call})
     */
    public void ended(String provider, UUID attemptId, String fault, boolean probe) {
        if (fault == null && !probe) {
            uncountedSuccesses
                    .computeIfAbsent(provider, p -> new AtomicInteger())
                    .incrementAndGet();
            return;
        }
        countWithTally(provider, probe ? attemptId : null, fault, fault == null ? 1 : 0);
    }

    /**
     * Writes this worker's tally of healthy calls into each provider's row ({@link #ended}). A
     * provider whose write fails keeps its tally for the next round, and the others are written.
     */
    void countTallied() {
        RuntimeException firstFailure = null;
        for (String provider : List.copyOf(uncountedSuccesses.keySet())) {
            try {
                countWithTally(provider, null, null, 0);
            } catch (RuntimeException notCounted) {
                if (firstFailure == null) {
                    firstFailure = notCounted;
                } else {
                    firstFailure.addSuppressed(notCounted);
                }
            }
        }
        if (firstFailure != null) {
            throw firstFailure;
        }
    }

    /**
     * Counts, in a transaction of its own, {@code healthyCalls} and the fault, together with this
     * worker's tally of the provider's healthy calls; the tally is kept when the write fails.
     */
    private void countWithTally(String provider, UUID probeAttempt, String fault, int healthyCalls) {
        int tallied = takeUncounted(provider);
        if (tallied == 0 && fault == null && probeAttempt == null && healthyCalls == 0) {
            return;
        }
        try {
            QuarkusTransaction.requiringNew().run(() -> count(provider, probeAttempt, fault, tallied + healthyCalls));
        } catch (RuntimeException notCounted) {
            giveBackUncounted(provider, tallied);
            throw notCounted;
        }
    }

    private int takeUncounted(String provider) {
        AtomicInteger tally = uncountedSuccesses.get(provider);
        return tally == null ? 0 : tally.getAndSet(0);
    }

    private void giveBackUncounted(String provider, int successes) {
        uncountedSuccesses.computeIfAbsent(provider, p -> new AtomicInteger()).addAndGet(successes);
    }

    /**
     * Counts calls in the provider's window, in the caller's transaction: {@code healthyCalls}, and one
     * more when {@code fault} is given. Opens the breaker when the window's faults reach the share, and
     * counts a probe call: the probe faults reaching the fault share of all the probe calls open the
     * breaker again; the successes making that impossible close it, and the held attempts are
     * announced again.
     *
     * @param probeAttempt the attempt whose call probed the half-open breaker; null for none
     */
    private void count(String provider, UUID probeAttempt, String fault, int healthyCalls) {
        Counted counted = session().doReturningWork(connection -> {
            BreakerState state;
            int calls;
            int faults;
            // The provider's row first, then its probe's: the order every writer of both keeps.
            try (PreparedStatement upsert = connection.prepareStatement("INSERT INTO provider_health AS h"
                    + " (provider, window_started_at, window_calls, window_faults, last_fault, updated_at)"
                    + " VALUES (?, statement_timestamp(), ?, ?, ?, statement_timestamp())"
                    + " ON CONFLICT (provider) DO UPDATE SET"
                    + " window_calls = CASE WHEN h.window_started_at > statement_timestamp() - ? * interval"
                    + " '1 millisecond' THEN h.window_calls + excluded.window_calls ELSE excluded.window_calls END,"
                    + " window_faults = CASE WHEN h.window_started_at > statement_timestamp() - ? * interval"
                    + " '1 millisecond' THEN h.window_faults + excluded.window_faults"
                    + " ELSE excluded.window_faults END,"
                    + " window_started_at = CASE WHEN h.window_started_at > statement_timestamp() - ? * interval"
                    + " '1 millisecond' THEN h.window_started_at ELSE statement_timestamp() END,"
                    + " last_fault = coalesce(excluded.last_fault, h.last_fault), updated_at = statement_timestamp()"
                    + " RETURNING state, window_calls, window_faults")) {
                long window = settings.window().toMillis();
                upsert.setString(1, provider);
                upsert.setInt(2, healthyCalls + (fault == null ? 0 : 1));
                upsert.setInt(3, fault == null ? 0 : 1);
                upsert.setString(4, fault);
                upsert.setLong(5, window);
                upsert.setLong(6, window);
                upsert.setLong(7, window);
                try (ResultSet row = upsert.executeQuery()) {
                    row.next();
                    state = BreakerState.fromWireName(row.getString(1));
                    calls = row.getInt(2);
                    faults = row.getInt(3);
                }
            }
            if (state != BreakerState.HALF_OPEN || probeAttempt == null) {
                return new Counted(state, calls, faults, false);
            }
            try (PreparedStatement probe = connection.prepareStatement("WITH probe AS (DELETE FROM provider_probe"
                    + " WHERE attempt_id = ? AND provider = ? RETURNING provider) UPDATE provider_health"
                    + " SET probe_calls = probe_calls + 1, probe_faults = probe_faults + ?,"
                    + " updated_at = statement_timestamp() WHERE provider IN (SELECT provider FROM probe)"
                    + " RETURNING probe_calls, probe_faults")) {
                probe.setObject(1, probeAttempt);
                probe.setString(2, provider);
                probe.setInt(3, fault == null ? 0 : 1);
                try (ResultSet row = probe.executeQuery()) {
                    return row.next()
                            ? new Counted(state, row.getInt(1), row.getInt(2), true)
                            : new Counted(state, calls, faults, false);
                }
            }
        });
        long probeCalls = settings.probeCalls();
        if (counted.probe()) {
            // Of all the probe calls, the faults reach the share, or the successes leave them unable to.
            if (counted.faults() * 100L >= settings.faultPercent() * probeCalls) {
                open(provider, "state = 'half_open'", fault);
            } else if ((counted.calls() - counted.faults()) * 100L > (100L - settings.faultPercent()) * probeCalls) {
                close(provider, probeAttempt);
            }
        } else if (counted.state() == BreakerState.CLOSED
                && fault != null
                && counted.calls() >= settings.minimumCalls()
                && counted.faults() * 100L >= (long) settings.faultPercent() * counted.calls()) {
            open(provider, "state = 'closed'", fault);
        }
    }

    /** A call's count: the window's, or, for a probe call, the probe calls' since the breaker went half open. */
    private record Counted(BreakerState state, int calls, int faults, boolean probe) {}

    /** Opens the provider's breaker for the open time, when {@code condition} holds; its probes end. */
    private void open(String provider, String condition, String fault) {
        boolean opened = em.createNativeQuery("UPDATE provider_health SET state = 'open',"
                                + " opened_at = statement_timestamp(),"
                                + " retry_at = statement_timestamp() + ?1 * interval '1 millisecond',"
                                + " probe_calls = 0, probe_faults = 0, updated_at = statement_timestamp()"
                                + " WHERE provider = ?2 AND " + condition)
                        .setParameter(1, settings.openFor().toMillis())
                        .setParameter(2, provider)
                        .executeUpdate()
                == 1;
        if (opened) {
            endProbes(provider);
            LOG.warnf("Provider %s's circuit breaker opened for %s: %s", provider, settings.openFor(), fault);
        }
    }

    private void close(String provider, UUID lastProbe) {
        int closed = em.createNativeQuery("UPDATE provider_health SET state = 'closed', opened_at = NULL,"
                        + " retry_at = NULL, probe_calls = 0, probe_faults = 0,"
                        + " window_started_at = statement_timestamp(), window_calls = 0, window_faults = 0,"
                        + " updated_at = statement_timestamp() WHERE provider = ?1 AND state = 'half_open'")
                .setParameter(1, provider)
                .executeUpdate();
        if (closed == 1) {
            endProbes(provider);
            LOG.infof(
                    "Provider %s's circuit breaker closed after probe %s; %d held attempts announced again",
                    provider, lastProbe, announceIfCallable(provider));
        }
    }

    /** The probes still out when the breaker opened or closed: their counts no longer decide anything. */
    private void endProbes(String provider) {
        em.createNativeQuery("DELETE FROM provider_probe WHERE provider = ?1")
                .setParameter(1, provider)
                .executeUpdate();
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
        loops.round(LOOP, () -> {
            if (!limitsPublished) {
                QuarkusTransaction.requiringNew().run(this::publishLimits);
                limitsPublished = true;
            }
            countTallied();
            QuarkusTransaction.requiringNew().run(this::reopen);
        });
    }

    /**
     * One round: an open breaker whose time is up gets as many held attempts announced again as it
     * has probe calls, and a half-open one as many as it has free (a probe abandoned by its worker is
     * freed first); a provider whose announced limit ended and whose breaker is closed gets every held
     * attempt announced again; capped providers and owners get as many announced again as they have
     * free slots ({@link InFlightCaps}). Rows another worker's round or a claim holds are skipped.
     */
    void reopen() {
        @SuppressWarnings("unchecked")
        List<String> probing = em.createNativeQuery("SELECT provider FROM provider_health"
                        + " WHERE coalesce(limited_until <= statement_timestamp(), true)"
                        + " AND (state = 'open' AND retry_at <= statement_timestamp() OR state = 'half_open')"
                        + " FOR UPDATE SKIP LOCKED")
                .getResultList();
        for (String provider : probing) {
            // Under the row's lock, so no claim takes a probe meanwhile.
            em.createNativeQuery("DELETE FROM provider_probe p WHERE p.provider = ?1 AND " + PROBE_ABANDONED)
                    .setParameter(1, provider)
                    .setParameter(2, settings.probeTimeout().toMillis())
                    .executeUpdate();
            int free = ((Number) em.createNativeQuery("SELECT ?1 - h.probe_calls - (SELECT count(*) FROM"
                                    + " provider_probe p WHERE p.provider = h.provider) FROM provider_health h"
                                    + " WHERE h.provider = ?2")
                            .setParameter(1, settings.probeCalls())
                            .setParameter(2, provider)
                            .getSingleResult())
                    .intValue();
            if (free > 0) {
                held.announceAgain(provider, free);
            }
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

    /**
     * Writes this worker's configured limits into each provider's row, where /admin/providers shows
     * them: once, in the first round that reaches the database, so the newest worker's are shown.
     */
    private void publishLimits() {
        session().doWork(connection -> {
            try (PreparedStatement upsert = connection.prepareStatement("INSERT INTO provider_health AS h"
                    + " (provider, window_started_at, max_in_flight, requests_per_minute, tokens_per_minute,"
                    + " updated_at) VALUES (?, statement_timestamp(), ?, ?, ?, statement_timestamp())"
                    + " ON CONFLICT (provider) DO UPDATE SET max_in_flight = excluded.max_in_flight,"
                    + " requests_per_minute = excluded.requests_per_minute,"
                    + " tokens_per_minute = excluded.tokens_per_minute, updated_at = statement_timestamp()")) {
                for (Map.Entry<String, WorkerConfig.Provider> provider : providers.entrySet()) {
                    upsert.setString(1, provider.getKey());
                    upsert.setObject(2, provider.getValue().maxInFlight().orElse(null), Types.INTEGER);
                    upsert.setObject(3, provider.getValue().requestsPerMinute().orElse(null), Types.INTEGER);
                    upsert.setObject(4, provider.getValue().tokensPerMinute().orElse(null), Types.INTEGER);
                    upsert.addBatch();
                }
                upsert.executeBatch();
            }
        });
    }

    private Session session() {
        return em.unwrap(Session.class);
    }
}
