package dev.jobapi.common.database;

import io.agroal.api.AgroalDataSource;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Transactions on a pooled connection of their own, committed here, with no transaction manager
 * and no ORM session: for the hot paths (job intake, the worker's steps) and work that runs outside
 * any request (the webhook loop). The transaction manager's begin, the connection's enlistment, the
 * session and the two-phase completion cost a third of intake's CPU (bench/ANALYSIS.md). Never call
 * it inside a JTA transaction: the pool would enlist the connection in that one, and the commit here
 * would fail.
 *
 * <p>While its work runs, the transaction is bound to the thread, so that what the work calls can
 * reach it without being handed the connection: {@link CurrentTransaction} is how.
 */
@Singleton
public class PlainTransactions {

    private static final Logger LOG = Logger.getLogger(PlainTransactions.class);

    /** The plain transaction this thread runs in, while {@link #inTransaction} runs its work. */
    private static final ThreadLocal<Bound> BOUND = new ThreadLocal<>();

    /** A plain transaction as the code inside it sees it: its connection, its resources, its hooks. */
    static final class Bound {
        final Connection connection;
        final Map<Object, Object> resources = new HashMap<>();
        final List<SqlWork<?>> beforeCommit = new ArrayList<>();
        final List<Runnable> afterCommit = new ArrayList<>();

        private Bound(Connection connection) {
            this.connection = connection;
        }
    }

    private final AgroalDataSource database;

    PlainTransactions(AgroalDataSource database) {
        this.database = database;
    }

    /** The plain transaction this thread runs in, or null. */
    static Bound bound() {
        return BOUND.get();
    }

    /**
     * Runs {@code work} in a transaction of its own and commits it; rolls it back and rethrows when
     * the work throws. Before the commit, on the same connection, what the work registered to run
     * then ({@link CurrentTransaction#beforeCommit}); after it, what it registered to run once
     * committed. A failure of the database itself comes back as an {@link IllegalStateException}
     * naming {@code what} with the {@link SQLException} as its cause, which {@link DatabaseAway} reads.
     */
    public <T> T inTransaction(String what, SqlWork<T> work) {
        if (BOUND.get() != null) {
            throw new IllegalStateException(what + ": this thread is in a plain transaction already");
        }
        Bound transaction;
        T result;
        try (Connection connection = database.getConnection()) {
            connection.setAutoCommit(false);
            transaction = new Bound(connection);
            BOUND.set(transaction);
            try {
                result = work.on(connection);
                // By index: a hook may register another.
                for (int i = 0; i < transaction.beforeCommit.size(); i++) {
                    transaction.beforeCommit.get(i).on(connection);
                }
                connection.commit();
            } catch (Throwable e) { // an Error too: the connection goes back to the pool without this transaction
                rollBack(connection, e);
                throw e;
            } finally {
                BOUND.remove();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(what + " failed: " + e.getMessage(), e);
        }
        for (Runnable action : transaction.afterCommit) {
            runCommitted(what, action);
        }
        return result;
    }

    /** A hook's failure after the commit must not report the committed transaction as failed. */
    private static void runCommitted(String what, Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            LOG.warnf(e, "%s committed; an action after its commit failed", what);
        }
    }

    /** A rollback that fails (the connection broke) must not hide why the work failed. */
    private static void rollBack(Connection connection, Throwable failure) {
        try {
            connection.rollback();
        } catch (SQLException rollbackFailed) {
            failure.addSuppressed(rollbackFailed);
        }
    }
}
