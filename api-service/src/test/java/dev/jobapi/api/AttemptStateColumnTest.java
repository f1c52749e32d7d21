package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.jobapi.common.attempt.AttemptState;
import io.quarkus.test.junit.QuarkusTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * The attempt's state column holds {@link AttemptState}'s values and nothing else (the CHECK
 * {@code attempt_state_is_legal}), and V15 turned the old quarantine flag into the quarantined state
 * without losing a held attempt.
 */
@QuarkusTest
class AttemptStateColumnTest extends ApiTestSupport {

    private static final String SCRATCH_SCHEMA = "attempt_state_migration_check";

    @Test
    void theStateColumnTakesEveryAttemptStateAndNothingElse() {
        String jobId = createJob(Tokens.user("alice"), "k-1", JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id");
        for (AttemptState state : AttemptState.values()) {
            // An output digest, so the succeeded row also satisfies attempt_succeeded_has_output.
            execute("UPDATE attempt SET state = '" + state.wireName() + "', output_digest = 'sha256:x'"
                    + " WHERE job_id = '" + jobId + "'");
            assertThat(count("SELECT count(*) FROM attempt WHERE job_id = '" + jobId + "' AND state = '"
                            + state.wireName() + "'"))
                    .as(state.wireName())
                    .isEqualTo(1);
        }
        assertThatThrownBy(() -> execute("UPDATE attempt SET state = 'held' WHERE job_id = '" + jobId + "'"))
                .hasStackTraceContaining("attempt_state_is_legal");
    }

    @Test
    void v15MakesEveryHeldUnknownAttemptQuarantinedAndDropsTheFlag() throws SQLException {
        Config config = ConfigProvider.getConfig();
        String url = config.getValue("quarkus.datasource.jdbc.url", String.class);
        String user = config.getValue("quarkus.datasource.username", String.class);
        String password = config.getValue("quarkus.datasource.password", String.class);
        try (Connection db = DriverManager.getConnection(url, user, password);
                Statement sql = db.createStatement()) {
            sql.execute("DROP SCHEMA IF EXISTS " + SCRATCH_SCHEMA + " CASCADE");
            try {
                Flyway.configure()
                        .dataSource(url, user, password)
                        .schemas(SCRATCH_SCHEMA)
                        .locations("classpath:db/migration")
                        .target("14")
                        .load()
                        .migrate();
                sql.execute("SET search_path TO " + SCRATCH_SCHEMA);
                sql.execute("INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, state,"
                        + " created_at, updated_at) VALUES ('00000000-0000-0000-0000-000000000001', 'alice', 'k',"
                        + " 'sha256:i', '{}', 'fake-a', 'needs_review', now(), now())");
                Map<String, String> rows = new LinkedHashMap<>();
                rows.put("held", "'unknown', true");
                rows.put("lost", "'unknown', false");
                rows.put("failed-after-hold", "'failed', true");
                int n = 0;
                for (var row : rows.entrySet()) {
                    n++;
                    sql.execute("INSERT INTO attempt (id, job_id, provider, state, quarantined, request_key,"
                            + " reason, created_at, updated_at) VALUES ('00000000-0000-0000-0000-00000000001" + n
                            + "', '00000000-0000-0000-0000-000000000001', 'fake-a', " + row.getValue() + ", 'r', '"
                            + row.getKey() + "', now(), now())");
                }

                Flyway.configure()
                        .dataSource(url, user, password)
                        .schemas(SCRATCH_SCHEMA)
                        .locations("classpath:db/migration")
                        .target("15")
                        .load()
                        .migrate();

                Map<String, String> states = new LinkedHashMap<>();
                try (ResultSet rs = sql.executeQuery("SELECT reason, state FROM attempt ORDER BY id")) {
                    while (rs.next()) {
                        states.put(rs.getString(1), rs.getString(2));
                    }
                }
                assertThat(states)
                        .containsExactly(
                                Map.entry("held", "quarantined"),
                                Map.entry("lost", "unknown"),
                                Map.entry("failed-after-hold", "failed"));
                try (ResultSet rs = sql.executeQuery("SELECT count(*) FROM information_schema.columns"
                        + " WHERE table_schema = '" + SCRATCH_SCHEMA + "' AND table_name = 'attempt'"
                        + " AND column_name = 'quarantined'")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("the flag is gone").isZero();
                }
            } finally {
                sql.execute("SET search_path TO DEFAULT");
                sql.execute("DROP SCHEMA IF EXISTS " + SCRATCH_SCHEMA + " CASCADE");
            }
        }
    }
}
