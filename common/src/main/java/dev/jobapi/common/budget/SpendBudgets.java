package dev.jobapi.common.budget;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.hibernate.Session;

/**
 * Money budgets, reserved before the send (docs/design.md, rule 20). A claim reserves the most its
 * call can cost in the windows of the owner's budgets (the UTC day's and month's) by a conditional
 * update that succeeds only while the reservation fits; concurrent claims of one owner queue on the
 * window's row and each sees the others' reservations, so no number of clicks, queued jobs or
 * workers spends past the budget. The provider's reported usage settles the reservation to the
 * cost, a failure with nothing reported releases it (both by triggers, whichever path writes them:
 * V23__spend_budgets.sql), and an attempt whose usage is unknown keeps it until it is reconciled.
 *
 * <p>The statements go to the transaction's JDBC connection directly, so a claim's pending entity
 * changes are not flushed early by them.
 */
@ApplicationScoped
@Transactional(Transactional.TxType.MANDATORY)
public class SpendBudgets {

    /** A budget period: a UTC day or a UTC month. */
    public enum Period {
        DAY,
        MONTH;

        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /** The first day of the period that holds {@code at}. */
        public LocalDate startOf(Instant at) {
            LocalDate day = LocalDate.ofInstant(at, ZoneOffset.UTC);
            return this == DAY ? day : day.withDayOfMonth(1);
        }

        /** The first day of the period after the one starting on {@code startsOn}. */
        public LocalDate nextStart(LocalDate startsOn) {
            return this == DAY ? startsOn.plusDays(1) : startsOn.plusMonths(1);
        }

        public static Optional<Period> fromWireName(String name) {
            for (Period period : values()) {
                if (period.wireName().equals(name)) {
                    return Optional.of(period);
                }
            }
            return Optional.empty();
        }
    }

    /** An owner's budget for one period and where it stands now. */
    public record Standing(
            Period period,
            LocalDate startsOn,
            BigDecimal limitUsd,
            int softPercent,
            boolean defaultBudget,
            BigDecimal spentUsd,
            BigDecimal reservedUsd) {

        public BigDecimal remainingUsd() {
            return limitUsd.subtract(spentUsd).subtract(reservedUsd).max(BigDecimal.ZERO);
        }

        /** Spent and reserved have crossed the soft threshold. */
        public boolean pastSoftThreshold() {
            return spentUsd.add(reservedUsd)
                            .multiply(BigDecimal.valueOf(100))
                            .compareTo(limitUsd.multiply(BigDecimal.valueOf(softPercent)))
                    >= 0;
        }
    }

    /** What a claim's reservation came to. */
    public sealed interface Reservation {}

    /**
     * Reserved (or nothing to reserve: no budget applies). {@code priceId} is the price the cost will be
     * settled at, null when none is set; {@code amountUsd} is null when nothing was reserved, else held in
     * each of {@code windows}, as they stand with it.
     */
    public record Reserved(Long priceId, BigDecimal amountUsd, List<Standing> windows) implements Reservation {

        /** The periods the amount is held in, as the attempt records them ({@code attempt.reserved_in}). */
        public String[] periods() {
            return windows.stream().map(w -> w.period().wireName()).toArray(String[]::new);
        }

        /** The windows this reservation took past their soft threshold. */
        public List<Standing> pastSoftThreshold() {
            return windows.stream().filter(Standing::pastSoftThreshold).toList();
        }
    }

    /** The call does not fit the owner's budget for {@code standing}'s period. */
    public record Refused(Standing standing, BigDecimal neededUsd) implements Reservation {
        public String reason() {
            return String.format(
                    "the owner's %s budget of %s USD holds %s USD spent and %s USD reserved; this call may cost up"
                            + " to %s USD",
                    standing.period().wireName(),
                    standing.limitUsd().toPlainString(),
                    standing.spentUsd().toPlainString(),
                    standing.reservedUsd().toPlainString(),
                    neededUsd.toPlainString());
        }
    }

    /** The owner has a budget and the provider's model has no price: no budget can be kept, no call starts. */
    public record Unpriced(String provider, String model) implements Reservation {
        public String reason() {
            return "no price is set for provider " + provider + ", model " + model
                    + ", and the owner has a budget: the call's cost could not be bounded";
        }
    }

    /** A budget that applies to an owner: its limit, soft threshold and whether it is the default. */
    record Budget(Period period, BigDecimal limitUsd, int softPercent, boolean defaultBudget) {

        Standing standing(LocalDate startsOn, BigDecimal spentUsd, BigDecimal reservedUsd) {
            return new Standing(period, startsOn, limitUsd, softPercent, defaultBudget, spentUsd, reservedUsd);
        }
    }

    private static final BigDecimal MILLION = BigDecimal.valueOf(1_000_000);

    private final EntityManager em;
    private final SpendConfig config;

    SpendBudgets(EntityManager em, SpendConfig config) {
        this.em = em;
        this.config = config;
    }

    /**
     * Reserves the most a call can cost: {@code promptTokensAtMost} bounds its prompt's tokens (the
     * caller counts the prompt's bytes: no token is shorter than a byte) and {@code maxTokens} its
     * output. Runs in the claim's transaction, before
     * the claim: a claim that then fails must {@link #release} it.
     */
    public Reservation reserve(
            String ownerId, String provider, String model, long promptTokensAtMost, int maxTokens, Instant now) {
        return em.unwrap(Session.class).doReturningWork(connection -> {
            Optional<Price> price = price(connection, provider, model, now);
            List<Budget> budgets = budgets(connection, ownerId);
            if (budgets.isEmpty()) {
                return new Reserved(price.map(Price::id).orElse(null), null, List.of());
            }
            if (price.isEmpty()) {
                return new Unpriced(provider, model);
            }
            BigDecimal amount = price.get().mostFor(promptTokensAtMost, maxTokens);
            List<Standing> reserved = new ArrayList<>();
            for (Budget budget : budgets) {
                LocalDate startsOn = budget.period().startOf(now);
                openWindow(connection, ownerId, budget.period(), startsOn);
                Optional<Standing> fitted = reserveIn(connection, ownerId, budget, startsOn, amount);
                if (fitted.isEmpty()) {
                    for (Standing earlier : reserved) {
                        release(connection, ownerId, earlier.period(), earlier.startsOn(), amount);
                    }
                    return new Refused(standing(connection, ownerId, budget, startsOn), amount);
                }
                reserved.add(fitted.get());
            }
            return new Reserved(price.get().id(), amount, List.copyOf(reserved));
        });
    }

    /** Gives back a reservation whose claim did not happen (another worker claimed the attempt first). */
    public void release(String ownerId, Reserved reservation) {
        if (reservation.amountUsd() == null) {
            return;
        }
        em.unwrap(Session.class).doWork(connection -> {
            for (Standing window : reservation.windows()) {
                release(connection, ownerId, window.period(), window.startsOn(), reservation.amountUsd());
            }
        });
    }

    /** The owner's budgets and where each stands at {@code now}; empty when none applies. */
    public List<Standing> standings(String ownerId, Instant now) {
        return em.unwrap(Session.class).doReturningWork(connection -> {
            List<Standing> out = new ArrayList<>();
            for (Budget budget : budgets(connection, ownerId)) {
                out.add(standing(connection, ownerId, budget, budget.period().startOf(now)));
            }
            return out;
        });
    }

    private record Price(long id, BigDecimal inputUsdPerMtok, BigDecimal outputUsdPerMtok) {
        BigDecimal mostFor(long promptTokens, int outputTokens) {
            return inputUsdPerMtok
                    .multiply(BigDecimal.valueOf(promptTokens))
                    .add(outputUsdPerMtok.multiply(BigDecimal.valueOf(outputTokens)))
                    .divide(MILLION, 6, RoundingMode.UP);
        }
    }

    private static Optional<Price> price(Connection connection, String provider, String model, Instant now)
            throws SQLException {
        try (PreparedStatement select =
                connection.prepareStatement("SELECT id, input_usd_per_mtok, output_usd_per_mtok FROM provider_price"
                        + " WHERE provider = ? AND model = ? AND effective_from <= ?"
                        + " ORDER BY effective_from DESC, id DESC LIMIT 1")) {
            select.setString(1, provider);
            select.setString(2, model);
            select.setObject(3, now.atOffset(ZoneOffset.UTC));
            try (ResultSet row = select.executeQuery()) {
                return row.next()
                        ? Optional.of(new Price(row.getLong(1), row.getBigDecimal(2), row.getBigDecimal(3)))
                        : Optional.empty();
            }
        }
    }

    /** The owner's budgets, day before month (the order every reservation locks windows in). */
    private List<Budget> budgets(Connection connection, String ownerId) throws SQLException {
        List<Budget> out = new ArrayList<>();
        for (Period period : Period.values()) {
            Optional<BigDecimal> fallback = period == Period.DAY ? config.dayUsd() : config.monthUsd();
            fallback.ifPresent(limit -> out.add(new Budget(period, limit, config.softPercent(), true)));
        }
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT period, limit_usd, soft_percent FROM spend_budget WHERE owner_id = ?")) {
            select.setString(1, ownerId);
            try (ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    Period period = Period.fromWireName(row.getString(1)).orElseThrow();
                    out.removeIf(b -> b.period() == period);
                    out.add(new Budget(period, row.getBigDecimal(2), row.getInt(3), false));
                }
            }
        }
        out.sort(java.util.Comparator.comparing(Budget::period));
        return out;
    }

    /**
     * Opens the owner's window for a period the first time a budget meets it, with what the owner's
     * attempts claimed in the period already cost (a budget set mid-month counts the month's spend).
     */
    private static void openWindow(Connection connection, String ownerId, Period period, LocalDate startsOn)
            throws SQLException {
        try (PreparedStatement insert =
                connection.prepareStatement("INSERT INTO spend_window (owner_id, period, starts_on, spent_usd)"
                        + " SELECT ?, ?, ?, (SELECT coalesce(sum(a.cost_usd), 0) FROM attempt a JOIN job j"
                        + " ON j.id = a.job_id WHERE j.owner_id = ? AND a.sent_at >= ? AND a.sent_at < ?)"
                        + " WHERE NOT EXISTS (SELECT 1 FROM spend_window WHERE owner_id = ? AND period = ?"
                        + " AND starts_on = ?) ON CONFLICT DO NOTHING")) {
            LocalDate endsBefore = period.nextStart(startsOn);
            insert.setString(1, ownerId);
            insert.setString(2, period.wireName());
            insert.setObject(3, startsOn);
            insert.setString(4, ownerId);
            insert.setObject(5, startsOn.atStartOfDay().atOffset(ZoneOffset.UTC));
            insert.setObject(6, endsBefore.atStartOfDay().atOffset(ZoneOffset.UTC));
            insert.setString(7, ownerId);
            insert.setString(8, period.wireName());
            insert.setObject(9, startsOn);
            insert.executeUpdate();
        }
    }

    /**
     * The reservation itself: one conditional update. Under READ COMMITTED an update that waited for
     * another claim's lock on the row evaluates its condition again on the row that claim left, so
     * the sum of reservations never passes the limit.
     */
    private static Optional<Standing> reserveIn(
            Connection connection, String ownerId, Budget budget, LocalDate startsOn, BigDecimal amount)
            throws SQLException {
        try (PreparedStatement update =
                connection.prepareStatement("UPDATE spend_window SET reserved_usd = reserved_usd + ?"
                        + " WHERE owner_id = ? AND period = ? AND starts_on = ?"
                        + " AND spent_usd + reserved_usd + ? <= ? RETURNING spent_usd, reserved_usd")) {
            update.setBigDecimal(1, amount);
            update.setString(2, ownerId);
            update.setString(3, budget.period().wireName());
            update.setObject(4, startsOn);
            update.setBigDecimal(5, amount);
            update.setBigDecimal(6, budget.limitUsd());
            try (ResultSet row = update.executeQuery()) {
                return row.next()
                        ? Optional.of(budget.standing(startsOn, row.getBigDecimal(1), row.getBigDecimal(2)))
                        : Optional.empty();
            }
        }
    }

    private static void release(
            Connection connection, String ownerId, Period period, LocalDate startsOn, BigDecimal amount)
            throws SQLException {
        try (PreparedStatement update =
                connection.prepareStatement("UPDATE spend_window SET reserved_usd = reserved_usd - ?"
                        + " WHERE owner_id = ? AND period = ? AND starts_on = ?")) {
            update.setBigDecimal(1, amount);
            update.setString(2, ownerId);
            update.setString(3, period.wireName());
            update.setObject(4, startsOn);
            update.executeUpdate();
        }
    }

    private static Standing standing(Connection connection, String ownerId, Budget budget, LocalDate startsOn)
            throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT spent_usd, reserved_usd FROM spend_window WHERE owner_id = ? AND period = ? AND starts_on = ?")) {
            select.setString(1, ownerId);
            select.setString(2, budget.period().wireName());
            select.setObject(3, startsOn);
            try (ResultSet row = select.executeQuery()) {
                boolean open = row.next();
                return budget.standing(
                        startsOn,
                        open ? row.getBigDecimal(1) : BigDecimal.ZERO.setScale(6),
                        open ? row.getBigDecimal(2) : BigDecimal.ZERO.setScale(6));
            }
        }
    }
}
