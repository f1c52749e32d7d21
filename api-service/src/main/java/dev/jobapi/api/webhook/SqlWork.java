package dev.jobapi.api.webhook;

import java.sql.Connection;
import java.sql.SQLException;

/** Work on a JDBC connection whose transaction the caller owns. */
@FunctionalInterface
interface SqlWork<T> {
    T on(Connection connection) throws SQLException;
}
