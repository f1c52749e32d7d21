package dev.jobapi.common.database;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Transactions on a pooled connection of their own, committed here, with no transaction manager
 * and no ORM session: for work that is a statement or two of plain SQL on a hot path (job intake),
 * or that runs outside any request (the webhook loop). The transaction manager's begin, the
 * connection's enlistment, the session and the two-phase completion cost a third of intake's CPU
 * (bench/ANALYSIS.md). Never call it inside a JTA transaction: the pool would enlist the connection
 * in that one, and the commit here would fail.
 */
@ApplicationScoped
public class PlainTransactions {

    private final AgroalDataSource database;

    PlainTransactions(AgroalDataSource database) {
        this.database = database;
    }

    /**
     * Runs {@code work} in a transaction of its own and commits it; rolls it back and rethrows when
     * the work throws. A failure of the database itself comes back as an {@link
     * IllegalStateException} naming {@code what} with the {@link SQLException} as its cause, which
     * {@link DatabaseAway} reads.
     */
    public <T> T inTransaction(String what, SqlWork<T> work) {
        try (Connection connection = database.getConnection()) {
            connection.setAutoCommit(false);
            try {
                T result = work.on(connection);
                connection.commit();
                return result;
            } catch (Throwable e) { // an Error too: the connection goes back to the pool without this transaction
                rollBack(connection, e);
                throw e;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(what + " failed: " + e.getMessage(), e);
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
