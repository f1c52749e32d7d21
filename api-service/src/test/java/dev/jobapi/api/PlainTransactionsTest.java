package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.common.database.PlainTransactions;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Intake's transaction (`PlainTransactions`, issue #33) commits all of its work or none: whatever
 * the work throws, an exception (a budget's refusal) or an error, nothing it wrote outlives it, and
 * the pooled connection goes back with no transaction open, so the next transaction on it commits
 * only its own rows. One thread, so the pool hands the same connection back each time. What the work
 * hooks on its transaction ({@link CurrentTransaction}) runs on its connection before the commit and
 * after the commit, and for work that fails, neither.
 */
@QuarkusTest
class PlainTransactionsTest extends ApiTestSupport {

    @Inject
    PlainTransactions transactions;

    @Inject
    CurrentTransaction current;

    @Test
    void workThatThrowsAnExceptionOrAnErrorLeavesNothingAndTheNextTransactionCommitsOnlyItsOwn() {
        execute("DELETE FROM owner_share WHERE owner_id LIKE 'plain-%'");
        RuntimeException refused = new IllegalStateException("refused, as a budget refuses");
        assertThatThrownBy(() -> transactions.inTransaction("a refused write", connection -> {
                    share(connection, "plain-refused");
                    throw refused;
                }))
                .isSameAs(refused);
        AssertionError broken = new AssertionError("an error in the work");
        assertThatThrownBy(() -> transactions.inTransaction("a broken write", connection -> {
                    share(connection, "plain-broken");
                    throw broken;
                }))
                .isSameAs(broken);

        transactions.inTransaction("the next write", connection -> share(connection, "plain-next"));

        assertThat(text("SELECT string_agg(owner_id, ',' ORDER BY owner_id) FROM owner_share"
                        + " WHERE owner_id LIKE 'plain-%'"))
                .isEqualTo("plain-next");
    }

    @Test
    void hooksRunOnTheConnectionBeforeTheCommitAndAfterItAndNeitherForWorkThatFails() {
        execute("DELETE FROM owner_share WHERE owner_id LIKE 'plain-%'");
        String committed = "SELECT string_agg(owner_id, ',' ORDER BY owner_id) FROM owner_share"
                + " WHERE owner_id LIKE 'plain-%'";
        List<String> seenAfterCommit = new ArrayList<>();

        transactions.inTransaction("a write with hooks", connection -> {
            current.beforeCommit(sameConnection -> share(sameConnection, "plain-hooked"));
            current.afterCommit(() -> seenAfterCommit.add(text(committed)));
            return share(connection, "plain-work");
        });
        assertThatThrownBy(() -> transactions.inTransaction("a failed write with hooks", connection -> {
                    current.beforeCommit(sameConnection -> share(sameConnection, "plain-failed-hooked"));
                    current.afterCommit(() -> seenAfterCommit.add("after a rollback"));
                    throw new IllegalStateException("refused");
                }))
                .hasMessage("refused");

        assertThat(seenAfterCommit)
                .as("run once, after the commit: another connection saw both rows")
                .containsExactly("plain-hooked,plain-work");
        assertThat(text(committed)).isEqualTo("plain-hooked,plain-work");
    }

    private static int share(Connection connection, String owner) throws SQLException {
        try (PreparedStatement insert =
                connection.prepareStatement("INSERT INTO owner_share (owner_id, weight, set_by, reason, updated_at)"
                        + " VALUES (?, 1, 'test', 'test', now())")) {
            insert.setString(1, owner);
            return insert.executeUpdate();
        }
    }
}
