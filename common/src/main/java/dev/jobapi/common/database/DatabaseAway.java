package dev.jobapi.common.database;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.hibernate.exception.JDBCConnectionException;

/**
 * Tells a failure caused by the database being unreachable for a while (a failover, a restart, a
 * partition, a full pool) from one the same statement would meet again: the first is worth waiting
 * out, the second is not.
 */
public final class DatabaseAway {

    private DatabaseAway() {}

    /**
     * Whether anything in the cause chain says the connection, not the statement, failed: SQLSTATE
     * class 08 (connection exception: refused, reset, a socket timeout), 57P01-57P03 (the server
     * shutting down or not accepting connections yet), 25006 (a read-only transaction: the
     * connection reached a node that is a standby now), or no connection to be had from the pool.
     */
    public static boolean isCause(Throwable failure) {
        return isCause(failure, 0);
    }

    /** The cause chain and what each link suppressed (a failed commit's XA error is suppressed there). */
    private static boolean isCause(Throwable failure, int depth) {
        for (Throwable cause = failure; cause != null && depth < 20; cause = cause.getCause(), depth++) {
            if (says(cause)) {
                return true;
            }
            for (Throwable suppressed : cause.getSuppressed()) {
                if (isCause(suppressed, depth + 1)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean says(Throwable cause) {
        if (cause instanceof JDBCConnectionException || cause instanceof SQLTransientConnectionException) {
            return true;
        }
        if (cause instanceof SQLException sql) {
            String state = sql.getSQLState();
            if (state != null && (state.startsWith("08") || state.startsWith("57P") || "25006".equals(state))) {
                return true;
            }
            // Agroal's: every pooled connection busy or being replaced.
            return sql.getMessage() != null && sql.getMessage().contains("acquisition timeout");
        }
        return false;
    }
}
