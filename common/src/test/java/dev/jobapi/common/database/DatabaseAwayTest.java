package dev.jobapi.common.database;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.hibernate.exception.ConstraintViolationException;
import org.hibernate.exception.GenericJDBCException;
import org.junit.jupiter.api.Test;

/**
 * The failures a database failover raised in the clustered soak (chaos/reports/cluster-after-fixes.md,
 * run 6), as the worker received them, are the database being away, and a statement's own failure
 * is not. The first kind is waited out and never counted toward a message's delivery limit.
 */
class DatabaseAwayTest {

    @Test
    void thePoolsAcquisitionTimeoutIsTheDatabaseAway() {
        SQLException agroal = new SQLException("Acquisition timeout while waiting for new connection");
        assertThat(DatabaseAway.isCause(
                        new GenericJDBCException("Unable to acquire JDBC Connection [Acquisition timeout]", agroal)))
                .isTrue();
        assertThat(DatabaseAway.isCause(agroal)).isTrue();
    }

    @Test
    void aConnectInterruptedDuringAFailoverIsTheDatabaseAway() {
        // pgjdbc's answer to a connect the pool interrupted: SQLSTATE 99999 around a RuntimeException.
        SQLException unusual = new SQLException(
                "Something unusual has occurred to cause the driver to fail. Please report this exception.",
                "99999",
                new RuntimeException("Interrupted while attempting to connect."));
        assertThat(DatabaseAway.isCause(new GenericJDBCException(
                        "Unable to acquire JDBC Connection [Something unusual has occurred]", unusual)))
                .isTrue();
    }

    @Test
    void aStatementsOwnFailureIsNot() {
        SQLException unusual = new SQLException("Something unusual has occurred", "99999");
        assertThat(DatabaseAway.isCause(new GenericJDBCException("could not execute statement", unusual)))
                .isFalse();
        assertThat(DatabaseAway.isCause(new ConstraintViolationException(
                        "duplicate key", new SQLException("duplicate key", "23505"), "job_pkey")))
                .isFalse();
    }
}
