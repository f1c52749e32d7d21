package dev.jobapi.common.database;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Locale;
import org.hibernate.JDBCException;
import org.hibernate.exception.JDBCConnectionException;

/**
 * Tells a failure caused by the database being unreachable for a while (a failover, a restart, a
 * partition, a full pool) from one the same statement would meet again: the first is worth waiting
 * out, the second is not.
 */
public final class DatabaseAway {

    /** How Hibernate's message begins for a failure to get a connection from the pool. */
    private static final String NO_CONNECTION = "Unable to acquire JDBC Connection";

    private DatabaseAway() {}

    /**
     * Whether anything in the cause chain says the connection, not the statement, failed: SQLSTATE
     * class 08 (connection exception: refused, reset, a socket timeout), 57P01-57P03 (the server
     * shutting down or not accepting connections yet), 25006 (a read-only transaction: the
     * connection reached a node that is a standby now), or no connection to be had: the pool's
     * acquisition timeout, or any failure Hibernate met while acquiring one (during a failover
     * pgjdbc fails a connect the pool interrupted with SQLSTATE 99999, "Something unusual has
     * occurred", and a multi-host URL with no primary yet with 08001).
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
        if (cause instanceof JDBCException jdbc
                && jdbc.getMessage() != null
                && jdbc.getMessage().startsWith(NO_CONNECTION)) {
            return true;
        }
        if (cause instanceof SQLException sql) {
            String state = sql.getSQLState();
            if (state != null && (state.startsWith("08") || state.startsWith("57P") || "25006".equals(state))) {
                return true;
            }
            // Agroal's "Acquisition timeout while waiting for new connection": every pooled connection
            // busy or being replaced.
            return sql.getMessage() != null
                    && sql.getMessage().toLowerCase(Locale.ROOT).contains("acquisition timeout");
        }
        return false;
    }
}
