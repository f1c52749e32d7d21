package dev.jobapi.common.database;

import java.sql.Connection;
import java.sql.SQLException;

/** Work on a JDBC connection whose transaction someone else owns. */
@FunctionalInterface
public interface SqlWork<T> {
    T on(Connection connection) throws SQLException;
}
