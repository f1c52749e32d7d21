package dev.jobapi.worker.service;

import dev.jobapi.common.budget.SpendBudgets;
import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.worker.provider.ProviderGate;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

/**
 * What a claim decides on besides its attempt and job, read in one statement: whether an operator
 * paused the provider (rule 19), the owner's budgets and the provider's price (rule 20), the cap an
 * operator set on the owner's calls in flight, and the provider's health gate (rule 21). Five reads
 * of one small row each were five round trips of every claim: 0.28 ms a claim in pgbench against
 * 0.15 ms for this one statement (bench/ANALYSIS.md). The decisions stay with their owners
 * ({@link SpendBudgets}, {@code InFlightCaps}, {@link ProviderGate}), which are handed what was read.
 *
 * <p>The pause's row is read {@code FOR SHARE}, as the claim always read it: a resume waits for a
 * claim that saw its pause, so the resume's announcement finds the attempt the claim held.
 */
@Singleton
class ClaimConditions {

    /** What was read. */
    record Read(
            boolean providerPaused,
            Optional<Integer> ownersSetCap,
            Optional<ProviderGate.Health> providerHealth,
            SpendBudgets.Terms spendTerms) {}

    private static final String READ = "SELECT"
            + " EXISTS (SELECT 1 FROM provider_pause WHERE provider = ? FOR SHARE),"
            + " (SELECT max_in_flight FROM owner_share WHERE owner_id = ?),"
            + " h.provider IS NOT NULL, " + ProviderGate.HEALTH_COLUMNS + ","
            + " p.id, p.input_usd_per_mtok, p.output_usd_per_mtok,"
            + " b.periods, b.providers, b.limits, b.soft_percents"
            + " FROM (VALUES (1)) AS one (one)"
            + " LEFT JOIN provider_health h ON h.provider = ?"
            + " LEFT JOIN LATERAL (SELECT id, input_usd_per_mtok, output_usd_per_mtok FROM provider_price"
            + " WHERE provider = ? AND model = ? AND effective_from <= ?"
            + " ORDER BY effective_from DESC, id DESC LIMIT 1) p ON true"
            + " CROSS JOIN LATERAL (" + SpendBudgets.SET_BUDGETS + ") b";

    private final CurrentTransaction transaction;

    ClaimConditions(CurrentTransaction transaction) {
        this.transaction = transaction;
    }

    /** In the claim's transaction: the conditions of a call to {@code provider}'s {@code model} for {@code owner}. */
    Read read(String provider, String model, String owner, Instant now) {
        return transaction.onConnection(connection -> {
            try (PreparedStatement select = connection.prepareStatement(READ)) {
                select.setString(1, provider);
                select.setString(2, owner);
                select.setString(3, provider);
                select.setString(4, provider);
                select.setString(5, model);
                select.setObject(6, now.atOffset(ZoneOffset.UTC));
                select.setString(7, owner);
                try (ResultSet row = select.executeQuery()) {
                    row.next();
                    return new Read(
                            row.getBoolean(1),
                            Optional.ofNullable(row.getObject(2, Integer.class)),
                            row.getBoolean(3) ? Optional.of(health(row, 4)) : Optional.empty(),
                            new SpendBudgets.Terms(price(row, 10), SpendBudgets.readSetBudgets(row, 13)));
                }
            }
        });
    }

    private static ProviderGate.Health health(ResultSet row, int first) throws SQLException {
        return new ProviderGate.Health(
                row.getString(first),
                row.getObject(first + 1, OffsetDateTime.class),
                row.getBoolean(first + 2),
                row.getString(first + 3),
                row.getObject(first + 4, OffsetDateTime.class),
                row.getString(first + 5));
    }

    private static Optional<SpendBudgets.Price> price(ResultSet row, int first) throws SQLException {
        long id = row.getLong(first);
        return row.wasNull()
                ? Optional.empty()
                : Optional.of(new SpendBudgets.Price(id, row.getBigDecimal(first + 1), row.getBigDecimal(first + 2)));
    }
}
