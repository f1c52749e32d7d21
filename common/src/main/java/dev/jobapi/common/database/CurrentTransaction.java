package dev.jobapi.common.database;

import io.quarkus.arc.Arc;
import jakarta.enterprise.context.ContextNotActiveException;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.persistence.TransactionRequiredException;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.TransactionalException;
import java.sql.SQLException;
import org.hibernate.Session;
import org.hibernate.engine.spi.SessionImplementor;

/**
 * The transaction this thread runs in, whichever kind it is: a plain one ({@link
 * PlainTransactions}, bound to the thread while its work runs) or a JTA one, whose connection the
 * ORM's session holds. For code that runs in either, the worker's steps and what they call: its
 * statements go to the transaction's connection, its hooks run as that transaction commits, and
 * outside any transaction it is refused.
 *
 * <p>In a plain transaction the ORM is out of reach: the entity manager has no transaction to join,
 * and code that needs it (a {@code @Transactional(MANDATORY)} bean, a Panache repository) fails
 * with one of the exceptions {@link #neededJta} recognises. A caller that may meet such code runs
 * its work again under JTA then.
 */
@Singleton
public class CurrentTransaction {

    private final EntityManager em;
    private final TransactionSynchronizationRegistry jta;

    CurrentTransaction(EntityManager em, TransactionSynchronizationRegistry jta) {
        this.em = em;
        this.jta = jta;
    }

    /** Whether this thread runs in a JTA transaction. */
    public boolean inJta() {
        return jta.getTransactionStatus() != Status.STATUS_NO_TRANSACTION;
    }

    /** Whether this thread runs in a plain transaction, and in no JTA one begun inside it. */
    public boolean inPlain() {
        return plain() != null;
    }

    /**
     * Whether work may run in a plain transaction on this thread: it is in no transaction, and no
     * CDI request context is active, in which an ORM read would not fail but go to a request's
     * session on another connection, outside the transaction.
     */
    public boolean plainPossible() {
        return PlainTransactions.bound() == null
                && !inJta()
                && !Arc.container().requestContext().isActive();
    }

    /**
     * Runs {@code work} on the connection of this thread's transaction: the plain one's, or the JTA
     * one's through the ORM's session (which does not flush it first). A {@link SQLException} comes
     * back unchecked with it as the cause, which {@link WriteConflict} and {@link DatabaseAway} read.
     */
    public <T> T onConnection(SqlWork<T> work) {
        PlainTransactions.Bound plain = plain();
        if (plain != null) {
            try {
                return work.on(plain.connection);
            } catch (SQLException e) {
                throw new IllegalStateException("Statement failed: " + e.getMessage(), e);
            }
        }
        requireJta();
        return em.unwrap(Session.class).doReturningWork(work::on);
    }

    /** What this transaction keeps under {@code key}, or null. */
    public Object resource(Object key) {
        PlainTransactions.Bound plain = plain();
        if (plain != null) {
            return plain.resources.get(key);
        }
        requireJta();
        return jta.getResource(key);
    }

    /** Keeps {@code value} under {@code key} until this transaction ends. */
    public void putResource(Object key, Object value) {
        PlainTransactions.Bound plain = plain();
        if (plain != null) {
            plain.resources.put(key, value);
            return;
        }
        requireJta();
        jta.putResource(key, value);
    }

    /**
     * Runs {@code work} on the transaction's connection just before it commits, after everything
     * else it wrote: under JTA, after the session's flush (a Hibernate before-completion callback,
     * the hook Envers writes its audit rows with). A transaction that rolls back runs none.
     */
    public void beforeCommit(SqlWork<?> work) {
        PlainTransactions.Bound plain = plain();
        if (plain != null) {
            plain.beforeCommit.add(work);
            return;
        }
        requireJta();
        em.unwrap(SessionImplementor.class).getActionQueue().registerCallback(session -> session.doWork(work::on));
    }

    /** Runs {@code action} once this transaction has committed; a rollback runs nothing. */
    public void afterCommit(Runnable action) {
        PlainTransactions.Bound plain = plain();
        if (plain != null) {
            plain.afterCommit.add(action);
            return;
        }
        requireJta();
        jta.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {}

            @Override
            public void afterCompletion(int status) {
                if (status == Status.STATUS_COMMITTED) {
                    action.run();
                }
            }
        });
    }

    /**
     * Whether {@code failure} says its work needed a JTA transaction and ran in a plain one: a
     * {@code @Transactional(MANDATORY)} bean refused it, or the entity manager found no transaction.
     */
    public static boolean neededJta(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof TransactionalException
                    || cause instanceof TransactionRequiredException
                    || cause instanceof ContextNotActiveException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The plain transaction of this thread, unless a JTA one began inside it (a {@code requiringNew}
     * of code a step calls): the innermost transaction is the one its statements belong to.
     */
    private PlainTransactions.Bound plain() {
        PlainTransactions.Bound plain = PlainTransactions.bound();
        return plain == null || inJta() ? null : plain;
    }

    private void requireJta() {
        if (!inJta()) {
            throw new TransactionRequiredException("Neither a plain nor a JTA transaction is active on this thread");
        }
    }
}
