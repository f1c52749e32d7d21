package dev.jobapi.common.database;

import jakarta.persistence.OptimisticLockException;
import java.sql.SQLException;
import org.hibernate.StaleStateException;

/**
 * Tells a transaction that lost to a concurrent one from any other failure: a version check that
 * failed, PostgreSQL's serialization failure (40001) or a deadlock it broke by aborting this side
 * (40P01). The other transaction won; running the whole transaction again decides on what it
 * committed. {@link DatabaseAway} is the other transient kind: the connection, not the data, failed.
 */
public final class WriteConflict {

    private WriteConflict() {}

    public static boolean isCause(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof OptimisticLockException || cause instanceof StaleStateException) {
                return true;
            }
            if (cause instanceof SQLException sql
                    && ("40001".equals(sql.getSQLState()) || "40P01".equals(sql.getSQLState()))) {
                return true;
            }
        }
        return false;
    }
}
