package dev.jobapi.common.database;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.stream.Collectors;

/** Plain SQL rows: select lists, and columns the driver does not give in the type the code holds. */
public final class Rows {

    private Rows() {}

    /** A select list of {@code columns}, each qualified by {@code alias}: "a.id, a.state". */
    public static String qualified(String alias, String... columns) {
        return Arrays.stream(columns).map(column -> alias + "." + column).collect(Collectors.joining(", "));
    }

    /** A {@code timestamptz} column as an instant; null for SQL NULL. */
    public static Instant instant(ResultSet row, int column) throws SQLException {
        OffsetDateTime at = row.getObject(column, OffsetDateTime.class);
        return at == null ? null : at.toInstant();
    }
}
