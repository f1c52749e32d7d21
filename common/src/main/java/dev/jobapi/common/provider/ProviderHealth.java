package dev.jobapi.common.provider;

import dev.jobapi.common.time.SqlTimes;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * Where each provider's health gate stands (docs/design.md, rule 21), as every worker shares it: its
 * circuit breaker and the rate limit the provider last announced. The workers write it; this reads.
 */
@ApplicationScoped
@Transactional(Transactional.TxType.MANDATORY)
public class ProviderHealth {

    /** A breaker's state. */
    public enum BreakerState {
        /** Calls go. */
        CLOSED,
        /** Every call is held until {@code retryAt}. */
        OPEN,
        /** One probe call is out; the rest are held until it ends. */
        HALF_OPEN;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static BreakerState fromWireName(String wire) {
            return valueOf(wire.toUpperCase(Locale.ROOT));
        }
    }

    /**
     * A provider's gate now: its breaker's state (a {@link BreakerState} wire name), the current window's
     * calls and provider faults, when it opened and when its probe may go, the last fault, the rate limit
     * the provider announced and why, and whether a call may start now.
     */
    public record Standing(
            String provider,
            String breaker,
            int windowCalls,
            int windowFaults,
            Instant openedAt,
            Instant retryAt,
            String lastFault,
            Instant limitedUntil,
            String limitReason,
            boolean open,
            int probeCalls,
            int probeFaults,
            int probesUnderWay) {

        /** A provider no call was ever counted for: closed, nothing known against it. */
        static Standing untouched(String provider) {
            return new Standing(
                    provider, BreakerState.CLOSED.wireName(), 0, 0, null, null, null, null, null, true, 0, 0, 0);
        }
    }

    /**
     * An attempt {@code a}'s call is in flight: claimed and not yet recorded, under a live lease (a
     * dead worker's call stops counting with its lease). Counted on the partial index
     * {@code attempt_in_flight}.
     */
    public static final String IN_FLIGHT =
            "a.state = 'starting' AND a.lease_owner IS NOT NULL AND a.lease_expires_at > statement_timestamp()";

    /**
     * A provider's limits, as the newest worker to start was configured with (null: none), and its
     * load against them now: calls in flight, and the requests and tokens counted this UTC minute
     * (only while it has a per-minute limit).
     */
    public record Load(
            Integer maxInFlight,
            Integer requestsPerMinute,
            Integer tokensPerMinute,
            long inFlight,
            int requestsThisMinute,
            long tokensThisMinute) {}

    private final EntityManager em;

    ProviderHealth(EntityManager em) {
        this.em = em;
    }

    /** The provider's gate at the database's time. */
    public Standing standing(String provider) {
        List<?> rows = em.createNativeQuery("SELECT provider, state, window_calls, window_faults, opened_at, retry_at,"
                        + " last_fault, limited_until, limit_reason,"
                        + " state = 'closed' AND coalesce(limited_until <= statement_timestamp(), true),"
                        + " probe_calls, probe_faults, (SELECT count(*) FROM provider_probe p WHERE p.provider = h.provider)"
                        + " FROM provider_health h WHERE provider = ?1")
                .setParameter(1, provider)
                .getResultList();
        return rows.isEmpty() ? Standing.untouched(provider) : standing((Object[]) rows.get(0));
    }

    /** The provider's limits and its load against them now. */
    public Load load(String provider) {
        String thisMinute = "h.rate_minute = date_trunc('minute', statement_timestamp())";
        Object[] row = (Object[]) em.createNativeQuery("SELECT h.max_in_flight, h.requests_per_minute,"
                        + " h.tokens_per_minute, (SELECT count(*) FROM attempt a WHERE a.provider = ?1 AND "
                        + IN_FLIGHT + "), CASE WHEN " + thisMinute + " THEN h.minute_requests ELSE 0 END,"
                        + " CASE WHEN " + thisMinute + " THEN h.minute_tokens ELSE 0 END"
                        + " FROM (SELECT 1) one LEFT JOIN provider_health h ON h.provider = ?1")
                .setParameter(1, provider)
                .getSingleResult();
        return new Load(
                integer(row[0]),
                integer(row[1]),
                integer(row[2]),
                ((Number) row[3]).longValue(),
                row[4] == null ? 0 : ((Number) row[4]).intValue(),
                row[5] == null ? 0 : ((Number) row[5]).longValue());
    }

    private static Integer integer(Object value) {
        return value == null ? null : ((Number) value).intValue();
    }

    /** Whether a call of the provider may start now (neither breaker nor announced limit holds it). */
    public boolean callable(String provider) {
        return standing(provider).open();
    }

    private static Standing standing(Object[] row) {
        return new Standing(
                (String) row[0],
                (String) row[1],
                ((Number) row[2]).intValue(),
                ((Number) row[3]).intValue(),
                SqlTimes.instant(row[4]),
                SqlTimes.instant(row[5]),
                (String) row[6],
                SqlTimes.instant(row[7]),
                (String) row[8],
                (Boolean) row[9],
                ((Number) row[10]).intValue(),
                ((Number) row[11]).intValue(),
                ((Number) row[12]).intValue());
    }
}
