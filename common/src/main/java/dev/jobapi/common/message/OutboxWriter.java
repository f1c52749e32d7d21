package dev.jobapi.common.message;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.tracing.TraceParent;
import dev.jobapi.common.tracing.Tracing;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.util.List;
import java.util.UUID;

/**
 * Writes the outbox row that announces an attempt, in the caller's transaction: the attempt and
 * its message commit together or not at all. The row keeps the trace context of the span that wrote
 * it, so the relay's publish, later and in another thread, continues that trace.
 */
@ApplicationScoped
public class OutboxWriter {

    private final EntityManager em;
    private final Clock clock;
    private final Tracing tracing;

    OutboxWriter(EntityManager em, Clock clock, Tracing tracing) {
        this.em = em;
        this.clock = clock;
        this.tracing = tracing;
    }

    @Transactional(Transactional.TxType.MANDATORY)
    public void announce(Attempt attempt) {
        // The attempt row must exist before the row that references it.
        em.flush();
        TraceParent trace = tracing.current();
        // The casts type the parameters that are null when nothing is traced.
        em.createNativeQuery("INSERT INTO outbox (attempt_id, job_id, created_at, traceparent, tracestate)"
                        + " VALUES (?1, ?2, ?3, CAST(?4 AS text), CAST(?5 AS text))")
                .setParameter(1, attempt.id())
                .setParameter(2, attempt.jobId())
                .setParameter(3, clock.instant())
                .setParameter(4, trace.traceparent())
                .setParameter(5, trace.tracestate())
                .executeUpdate();
    }

    /**
     * The trace context the attempt's first traced outbox row kept: the trace of the request that
     * made the attempt. {@link TraceParent#NONE} when no row of it was traced.
     */
    public TraceParent traceOf(UUID attemptId) {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = em.createNativeQuery("SELECT traceparent, tracestate FROM outbox"
                        + " WHERE attempt_id = ?1 AND traceparent IS NOT NULL ORDER BY id LIMIT 1")
                .setParameter(1, attemptId)
                .getResultList();
        return rows.isEmpty() ? TraceParent.NONE : new TraceParent((String) rows.get(0)[0], (String) rows.get(0)[1]);
    }
}
