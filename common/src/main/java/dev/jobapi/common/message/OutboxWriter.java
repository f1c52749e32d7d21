package dev.jobapi.common.message;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.tracing.RequestIds;
import dev.jobapi.common.tracing.TraceParent;
import dev.jobapi.common.tracing.Tracing;
import jakarta.enterprise.event.Event;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import org.hibernate.Session;

/**
 * Writes the outbox row that announces an attempt, in the caller's transaction: the attempt and
 * its message commit together or not at all. The row keeps the trace context of the span that wrote
 * it and the id of the request that wrote it, so the relay's publish, later and in another thread,
 * continues that trace and hands the worker that request id. The write signals {@link
 * OutboxWritten}, which the relay observes after the commit.
 */
@Singleton
public class OutboxWriter {

    private final EntityManager em;
    private final Clock clock;
    private final Tracing tracing;
    private final Event<OutboxWritten> written;

    OutboxWriter(EntityManager em, Clock clock, Tracing tracing, Event<OutboxWritten> written) {
        this.em = em;
        this.clock = clock;
        this.tracing = tracing;
        this.written = written;
    }

    /**
     * What an outbox row written now carries besides its attempt: the current trace context and
     * request id.
     */
    public record Origin(TraceParent trace, String requestId) {}

    /** The {@link Origin} of a row written now, for a caller that writes the row in a statement of its own. */
    public Origin origin() {
        return new Origin(tracing.current(), RequestIds.current().orElse(null));
    }

    /**
     * Tells the relay that the caller wrote an outbox row in a statement of its own (job intake writes
     * the job, its attempt and the row in one, on a plain transaction): called after that commit, the
     * relay wakes at once; called inside a JTA transaction, once it commits.
     */
    public void announced() {
        written.fire(new OutboxWritten());
    }

    @Transactional(Transactional.TxType.MANDATORY)
    public void announce(Attempt attempt) {
        // The attempt row must exist before the row that references it.
        em.flush();
        Origin origin = origin();
        TraceParent trace = origin.trace();
        String requestId = origin.requestId();
        // Straight to the transaction's connection: a native query would flush the session again, and
        // its query machinery was a tenth of the api's CPU on intake (bench/ANALYSIS.md).
        em.unwrap(Session.class).doWork(connection -> {
            try (PreparedStatement insert = connection.prepareStatement(
                    "INSERT INTO outbox (attempt_id, job_id, created_at, traceparent, tracestate, request_id)"
                            + " VALUES (?, ?, ?, ?, ?, ?)")) {
                insert.setObject(1, attempt.id());
                insert.setObject(2, attempt.jobId());
                insert.setObject(3, OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC));
                insert.setString(4, trace.traceparent());
                insert.setString(5, trace.tracestate());
                insert.setString(6, requestId);
                insert.executeUpdate();
            }
        });
        announced();
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
