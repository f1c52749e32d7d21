package dev.jobapi.common.job;

import dev.jobapi.common.text.StoredText;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Appends to a job's timeline in the caller's transaction, so an event exists exactly when the
 * change it describes committed.
 */
@ApplicationScoped
public class JobEvents {

    /** A job's timeline lists at most one replay of the job, and one per attempt, in this window. */
    public static final Duration REPLAY_WINDOW = Duration.ofMinutes(1);

    private final EntityManager em;
    private final Clock clock;

    JobEvents(EntityManager em, Clock clock) {
        this.em = em;
        this.clock = clock;
    }

    /** One entry of a job's timeline; {@code attemptId} is null for an event of the job as a whole. */
    public record Event(UUID attemptId, JobEventKind kind, String detail) {}

    @Transactional(Transactional.TxType.MANDATORY)
    public void record(UUID jobId, UUID attemptId, JobEventKind kind, String detail) {
        record(jobId, List.of(new Event(attemptId, kind, detail)));
    }

    /**
     * Appends the event unless the job's newest event of this kind (for this attempt) is younger
     * than {@code window}: for what a client can repeat at will, replays, so a retry loop leaves a
     * bounded trace on the timeline (the replay counters still count every one).
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void recordAtMostOncePer(Duration window, UUID jobId, UUID attemptId, JobEventKind kind, String detail) {
        Instant now = clock.instant();
        em.createNativeQuery("INSERT INTO job_event (job_id, attempt_id, at, kind, detail)"
                        + " SELECT ?1, ?2, ?3, ?4, ?5 WHERE NOT EXISTS (SELECT 1 FROM job_event WHERE job_id = ?1"
                        + " AND attempt_id IS NOT DISTINCT FROM ?2 AND kind = ?4 AND at > ?6)")
                .setParameter(1, jobId)
                .setParameter(2, attemptId)
                .setParameter(3, now)
                .setParameter(4, kind.wireName())
                .setParameter(5, StoredText.of(detail))
                .setParameter(6, now.minus(window))
                .executeUpdate();
    }

    /** Appends the events in order, in one statement. */
    @Transactional(Transactional.TxType.MANDATORY)
    public void record(UUID jobId, List<Event> events) {
        StringBuilder sql = new StringBuilder("INSERT INTO job_event (job_id, attempt_id, at, kind, detail) VALUES ");
        for (int i = 0; i < events.size(); i++) {
            int p = 2 + 3 * i;
            sql.append(i == 0 ? "" : ", ")
                    .append("(?1, ?")
                    .append(p)
                    .append(", ?")
                    .append(events.size() * 3 + 2)
                    .append(", ?")
                    .append(p + 1)
                    .append(", ?")
                    .append(p + 2)
                    .append(')');
        }
        var insert = em.createNativeQuery(sql.toString()).setParameter(1, jobId);
        for (int i = 0; i < events.size(); i++) {
            Event event = events.get(i);
            int p = 2 + 3 * i;
            insert.setParameter(p, event.attemptId())
                    .setParameter(p + 1, event.kind().wireName())
                    .setParameter(p + 2, StoredText.of(event.detail()));
        }
        insert.setParameter(events.size() * 3 + 2, clock.instant()).executeUpdate();
    }
}
