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
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof JDBCConnectionException || cause instanceof SQLTransientConnectionException) {
                return true;
            }
            if (cause instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                if (state.startsWith("08") || state.startsWith("57P") || "25006".equals(state)) {
                    return true;
                }
            }
            if (cause instanceof SQLException sql
                    && sql.getMessage() != null
                    && sql.getMessage().contains("acquisition timeout")) {
                return true; // Agroal's: every pooled connection busy or being replaced
            }
        }
        return false;
    }
}
