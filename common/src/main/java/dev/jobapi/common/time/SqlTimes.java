package dev.jobapi.common.time;

import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;

/** Timestamps as native queries return them. */
public final class SqlTimes {

    private SqlTimes() {}

    /** A timestamptz column's value as an instant (its JDBC type depends on Hibernate's mapping). */
    public static Instant instant(Object value) {
        if (value instanceof Timestamp timestamp) {
            return timestamp.toInstant();
        }
        if (value instanceof OffsetDateTime offset) {
            return offset.toInstant();
        }
        return (Instant) value;
    }
}
