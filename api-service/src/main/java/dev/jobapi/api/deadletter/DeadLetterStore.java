package dev.jobapi.api.deadletter;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.util.UUID;
import org.hibernate.Session;

/**
 * The mover's one transaction per dead letter: either the message goes back to the work queue (a
 * healthy attempt the broker dropped at its delivery limit, counted) or it becomes a row. Both are
 * keyed by the message, so a redelivered dead letter neither counts twice nor makes a second row.
 */
@ApplicationScoped
public class DeadLetterStore {

    /**
     * Times the mover sends one attempt's message back to work after the broker dropped it at its
     * delivery limit; the next drop is stored. A message that kills the worker (crash poison) is never
     * counted by the worker, only lost with its connection: this bound is what stops it.
     */
    public static final int MAX_RETURNS = 3;

    /** Who settles a dead letter that carried no work (the audit's actor for it). */
    static final String SETTLED_BY = "dead-letter-mover";

    /** What to do with the message once the transaction committed. */
    public enum Decision {
        /** A row holds it (made now or by an earlier delivery of the same message): ack it. */
        STORED,
        /** Its attempt is open and the broker only ran out of deliveries: publish a fresh copy, then ack. */
        RETURN_TO_WORK
    }

    private final EntityManager em;
    private final Clock clock;

    DeadLetterStore(EntityManager em, Clock clock) {
        this.em = em;
        this.clock = clock;
    }

    @Transactional(Transactional.TxType.REQUIRES_NEW)
    public Decision receive(DeadLetterMessage message) {
        return em.unwrap(Session.class).doReturningWork(connection -> {
            Instant now = clock.instant();
            String owner = null;
            String provider = null;
            UUID jobId = message.jobId();
            boolean somethingLeftToDo = false;
            String attemptState = null;
            if (message.attemptId() != null) {
                try (PreparedStatement select = connection.prepareStatement(
                        "SELECT a.job_id, a.provider, a.state, j.owner_id, j.state FROM attempt a"
                                + " JOIN job j ON j.id = a.job_id WHERE a.id = ?")) {
                    select.setObject(1, message.attemptId());
                    try (ResultSet row = select.executeQuery()) {
                        if (row.next()) {
                            jobId = row.getObject(1, UUID.class);
                            provider = row.getString(2);
                            owner = row.getString(4);
                            attemptState = row.getString(3);
                            somethingLeftToDo = !DeadLetters.nothingLeftToDo(row.getString(3), row.getString(5));
                        }
                    }
                }
            }
            if (message.diedAtDeliveryLimit() && somethingLeftToDo) {
                try (PreparedStatement count = connection.prepareStatement(
                        "INSERT INTO dead_letter_return (message_key, attempt_id, returned_at) VALUES (?, ?, ?)"
                                + " ON CONFLICT (message_key) DO NOTHING")) {
                    count.setString(1, message.key());
                    count.setObject(2, message.attemptId());
                    count.setTimestamp(3, Timestamp.from(now));
                    count.executeUpdate();
                }
                long returns;
                try (PreparedStatement count =
                        connection.prepareStatement("SELECT count(*) FROM dead_letter_return WHERE attempt_id = ?")) {
                    count.setObject(1, message.attemptId());
                    try (ResultSet row = count.executeQuery()) {
                        row.next();
                        returns = row.getLong(1);
                    }
                }
                if (returns <= MAX_RETURNS) {
                    return Decision.RETURN_TO_WORK;
                }
            }
            // Dropped by the broker's count of lost connections after its attempt had nothing left to do: the
            // message carried no work, so nothing is lost and nothing waits for an operator. Kept for the
            // record, settled at once.
            boolean harmless = message.diedAtDeliveryLimit() && attemptState != null && !somethingLeftToDo;
            try (PreparedStatement insert = connection.prepareStatement(
                    "INSERT INTO dead_letter (message_key, attempt_id, job_id, owner_id, provider, reason, death_queue,"
                            + " death_count, first_death_at, last_death_at, delivery_count, dead_lettered_at,"
                            + " source_queue, body, headers, settlement, settled_at, settled_by, settle_reason)"
                            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?)"
                            + " ON CONFLICT (message_key) DO NOTHING")) {
                insert.setString(1, message.key());
                insert.setObject(2, message.attemptId());
                insert.setObject(3, message.attemptId() == null ? null : jobId);
                insert.setString(4, owner);
                insert.setString(5, provider);
                insert.setString(6, message.reason());
                insert.setString(7, message.deathQueue());
                insert.setLong(8, message.deathCount());
                insert.setTimestamp(9, message.firstDeathAt() == null ? null : Timestamp.from(message.firstDeathAt()));
                insert.setTimestamp(10, message.lastDeathAt() == null ? null : Timestamp.from(message.lastDeathAt()));
                insert.setObject(11, message.deliveryCount());
                insert.setTimestamp(12, Timestamp.from(now));
                insert.setString(13, message.sourceQueue());
                insert.setBytes(14, message.body());
                insert.setString(15, message.headers().toString());
                insert.setString(16, harmless ? "skipped" : null);
                insert.setTimestamp(17, harmless ? Timestamp.from(now) : null);
                insert.setString(18, harmless ? SETTLED_BY : null);
                insert.setString(
                        19,
                        harmless
                                ? "dropped at the delivery limit; its attempt was " + attemptState + ", with nothing"
                                        + " left to do"
                                : null);
                insert.executeUpdate();
            }
            return Decision.STORED;
        });
    }

    /** How many times the mover sent this attempt's message back to work. */
    @Transactional(Transactional.TxType.REQUIRES_NEW)
    public long returns(UUID attemptId) {
        return ((Number) em.createNativeQuery("SELECT count(*) FROM dead_letter_return WHERE attempt_id = ?1")
                        .setParameter(1, attemptId)
                        .getSingleResult())
                .longValue();
    }
}
