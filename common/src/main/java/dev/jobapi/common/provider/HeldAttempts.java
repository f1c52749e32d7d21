package dev.jobapi.common.provider;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

/**
 * The attempts a provider's hold left behind: starting, unclaimed, their messages acknowledged and
 * none waiting in the outbox. An operator's pause (rule 19) and a shut health gate (rule 21) leave
 * attempts so; the resume, and the gate opening again, announce them again here.
 */
@ApplicationScoped
@Transactional(Transactional.TxType.MANDATORY)
public class HeldAttempts {

    private final EntityManager em;

    HeldAttempts(EntityManager em) {
        this.em = em;
    }

    /**
     * Announces again, through the outbox, at most {@code limit} of the provider's held attempts, the
     * oldest first. The new row keeps the trace of the attempt's first announcement.
     *
     * @return how many were announced
     */
    public int announceAgain(String provider, int limit) {
        return announce("a.provider = ?1", provider, limit);
    }

    /**
     * Like {@link #announceAgain}, for the held attempts of one owner's jobs, at any provider but
     * those {@code shutProviders} (a query of provider names) selects.
     */
    public int announceAgainOfOwner(String owner, int limit, String shutProviders) {
        return announce(
                "a.job_id IN (SELECT id FROM job WHERE owner_id = ?1) AND a.provider NOT IN (" + shutProviders + ")",
                owner,
                limit);
    }

    private int announce(String whose, String value, int limit) {
        return em.createNativeQuery("INSERT INTO outbox (attempt_id, job_id, created_at, traceparent, tracestate)"
                        + " SELECT held.id, held.job_id, statement_timestamp(), first.traceparent, first.tracestate"
                        + " FROM (SELECT a.id, a.job_id FROM attempt a WHERE " + whose
                        + " AND a.state = 'starting' AND a.lease_owner IS NULL"
                        + " AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.attempt_id = a.id AND o.sent_at IS NULL)"
                        + " ORDER BY a.created_at LIMIT ?2) held"
                        + " LEFT JOIN LATERAL (SELECT traceparent, tracestate FROM outbox"
                        + " WHERE attempt_id = held.id AND traceparent IS NOT NULL ORDER BY id LIMIT 1) first"
                        + " ON true")
                .setParameter(1, value)
                .setParameter(2, limit)
                .executeUpdate();
    }
}
