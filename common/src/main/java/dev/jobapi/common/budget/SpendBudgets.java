package dev.jobapi.common.budget;

import dev.jobapi.common.database.CurrentTransaction;
import jakarta.inject.Singleton;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Money budgets, reserved before the send (docs/design.md, rule 20). An owner's budget for a UTC day
 * or month holds the calls to every provider, or those to one provider. A claim reserves the most its
 * call can cost in the window of each budget that applies to it (the owner's for every provider and
 * those for the call's provider) by a conditional update that succeeds only while the reservation
 * fits; concurrent claims of one owner queue on the window's row and each sees the others'
 * reservations, so no number of clicks, queued jobs or workers spends past a budget. The provider's
 * reported usage settles the reservation to the cost in every window of the call, a failure with
 * nothing reported releases it from the windows it was held in (both by triggers, whichever path
 * writes them: V23__spend_budgets.sql, V30__provider_budgets.sql), and an attempt whose usage is
 * unknown keeps it until it is reconciled.
 *
 * <p>The statements go to the JDBC connection of the caller's transaction, plain or JTA ({@link
 * CurrentTransaction}), so a claim's pending entity changes are not flushed early by them.
 */
@Singleton
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

    /**
     * An owner's budget for one period and where it stands now. {@code provider} is the one provider
     * whose calls it holds, null for a budget of every provider.
     */
    public record Standing(
            Period period,
            String provider,
            LocalDate startsOn,
            BigDecimal limitUsd,
            int softPercent,
            boolean defaultBudget,
            BigDecimal spentUsd,
            BigDecimal reservedUsd) {

        /** The budget in words: "day budget", "month budget for provider fake-a". */
        public String describe() {
            return period.wireName() + " budget" + (provider == null ? "" : " for provider " + provider);
        }

        /** The window's name in {@code attempt.reserved_in}: "day", "month:fake-a" (V30's spend_window_name). */
        String windowName() {
            return period.wireName() + (provider == null ? "" : ":" + provider);
        }

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

        /** The windows the amount is held in, as the attempt records them ({@code attempt.reserved_in}). */
        public String[] windowNames() {
            return windows.stream().map(Standing::windowName).toArray(String[]::new);
        }

        /** The windows this reservation took past their soft threshold. */
        public List<Standing> pastSoftThreshold() {
            return windows.stream().filter(Standing::pastSoftThreshold).toList();
        }
    }

    /** The call does not fit the owner's budget {@code standing}: its period's, for every provider or the call's. */
    public record Refused(Standing standing, BigDecimal neededUsd) implements Reservation {
        public String reason() {
            return String.format(
                    "the owner's %s of %s USD holds %s USD spent and %s USD reserved; this call may cost up"
                            + " to %s USD",
                    standing.describe(),
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

    /**
     * A budget of an owner: its period, the provider it holds (null: every provider), its limit, soft
     * threshold and whether it is the default.
     */
    record Budget(Period period, String provider, BigDecimal limitUsd, int softPercent, boolean defaultBudget) {

        /** Day before month, and a period's budget of every provider before a provider's: the lock order. */
        static final Comparator<Budget> LOCK_ORDER = Comparator.comparing(Budget::period)
                .thenComparing(Budget::provider, Comparator.nullsFirst(Comparator.naturalOrder()));

        /** Whether it holds a call to {@code callProvider} (null: asked of every provider's budgets only). */
        boolean holds(String callProvider) {
            return provider == null || provider.equals(callProvider);
        }

        /** The provider column's value: '' for a budget of every provider. */
        String providerColumn() {
            return provider == null ? EVERY_PROVIDER : provider;
        }

        Standing standing(LocalDate startsOn, BigDecimal spentUsd, BigDecimal reservedUsd) {
            return new Standing(
                    period, provider, startsOn, limitUsd, softPercent, defaultBudget, spentUsd, reservedUsd);
        }
    }

    /** The provider column of a budget or window of every provider (V30). */
    public static final String EVERY_PROVIDER = "";

    private static final BigDecimal MILLION = BigDecimal.valueOf(1_000_000);

    private final CurrentTransaction transaction;
    private final SpendConfig config;

    SpendBudgets(CurrentTransaction transaction, SpendConfig config) {
        this.transaction = transaction;
        this.config = config;
    }

    /**
     * What a reservation is decided on, read by the claim with its other conditions in one statement
     * (the worker's {@code ClaimConditions}): the price in force for the call's provider and model,
     * and the budgets the owner's operator set ({@link #SET_BUDGETS}), the defaults not yet added.
     */
    public record Terms(Optional<Price> price, List<SetBudget> setBudgets) {}

    /** A provider's price per million tokens, as {@code provider_price} holds it. */
    public record Price(long id, BigDecimal inputUsdPerMtok, BigDecimal outputUsdPerMtok) {
        BigDecimal mostFor(long promptTokens, int outputTokens) {
            return inputUsdPerMtok
                    .multiply(BigDecimal.valueOf(promptTokens))
                    .add(outputUsdPerMtok.multiply(BigDecimal.valueOf(outputTokens)))
                    .divide(MILLION, 6, RoundingMode.UP);
        }
    }

    /** One row of {@code spend_budget}: a budget an operator set for an owner. */
    public record SetBudget(String period, String provider, BigDecimal limitUsd, int softPercent) {}

    /**
     * Reserves the most a call to {@code provider} can cost, in every budget that holds it: the
     * owner's for every provider and those for {@code provider}. {@code promptTokensAtMost} bounds
     * its prompt's tokens (the caller counts the prompt's bytes: no token is shorter than a byte) and
     * {@code maxTokens} its output. Runs in the claim's transaction, before the claim: a claim that
     * then fails must {@link #release} it. The windows are reserved in, and so locked in,
     * {@link Budget#LOCK_ORDER}, the order the settling triggers lock them in too.
     */
    public Reservation reserve(
            String ownerId,
            String provider,
            String model,
            long promptTokensAtMost,
            int maxTokens,
            Instant now,
            Terms terms) {
        List<Budget> budgets = withDefaults(terms.setBudgets()).stream()
                .filter(budget -> budget.holds(provider))
                .toList();
        Optional<Price> price = terms.price();
        if (budgets.isEmpty()) {
            return new Reserved(price.map(Price::id).orElse(null), null, List.of());
        }
        if (price.isEmpty()) {
            return new Unpriced(provider, model);
        }
        BigDecimal amount = price.get().mostFor(promptTokensAtMost, maxTokens);
        return transaction.onConnection(connection -> {
            List<Standing> reserved = new ArrayList<>();
            for (Budget budget : budgets) {
                LocalDate startsOn = budget.period().startOf(now);
                openWindow(connection, ownerId, budget, startsOn);
                Optional<Standing> fitted = reserveIn(connection, ownerId, budget, startsOn, amount);
                if (fitted.isEmpty()) {
                    for (Standing earlier : reserved) {
                        release(connection, ownerId, earlier, amount);
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
        transaction.onConnection(connection -> {
            for (Standing window : reservation.windows()) {
                release(connection, ownerId, window, reservation.amountUsd());
            }
            return null;
        });
    }

    /**
     * Every budget of the owner (for every provider, and each provider's) and where each stands at
     * {@code now}; empty when none applies.
     */
    public List<Standing> standings(String ownerId, Instant now) {
        return transaction.onConnection(
                connection -> standingsOf(connection, ownerId, withDefaults(setBudgets(connection, ownerId)), now));
    }

    /**
     * The owner's budgets that hold a call to {@code provider} (null: only those of every provider,
     * for a call to a provider not named yet) and where each stands at {@code now}, on the caller's
     * connection.
     */
    public List<Standing> standings(Connection connection, String ownerId, String provider, Instant now)
            throws SQLException {
        return standings(connection, ownerId, provider, now, setBudgets(connection, ownerId));
    }

    /**
     * The same, from the budgets an operator set for the owner as a caller read them already
     * ({@link #SET_BUDGETS}): no statement at all when no budget holds the call.
     */
    public List<Standing> standings(
            Connection connection, String ownerId, String provider, Instant now, List<SetBudget> set)
            throws SQLException {
        List<Budget> holding = withDefaults(set).stream()
                .filter(budget -> budget.holds(provider))
                .toList();
        return standingsOf(connection, ownerId, holding, now);
    }

    private static List<Standing> standingsOf(Connection connection, String ownerId, List<Budget> budgets, Instant now)
            throws SQLException {
        List<Standing> out = new ArrayList<>();
        for (Budget budget : budgets) {
            out.add(standing(connection, ownerId, budget, budget.period().startOf(now)));
        }
        return out;
    }

    /**
     * The budgets an operator set for an owner, in one row of one array a column, all null when
     * there are none: so that a caller may read them as part of a statement of its own (the claim's
     * conditions, intake's insert). Parameter 1 is the owner; {@link #readSetBudgets} reads the row.
     */
    public static final String SET_BUDGETS = "SELECT array_agg(period) AS periods, array_agg(provider) AS providers,"
            + " array_agg(limit_usd) AS limits, array_agg(soft_percent::integer) AS soft_percents"
            + " FROM spend_budget WHERE owner_id = ?";

    /** The budgets of a row of {@link #SET_BUDGETS}' four columns, the first at {@code first}. */
    public static List<SetBudget> readSetBudgets(ResultSet row, int first) throws SQLException {
        Array periods = row.getArray(first);
        if (periods == null) {
            return List.of();
        }
        String[] period = (String[]) periods.getArray();
        String[] provider = (String[]) row.getArray(first + 1).getArray();
        BigDecimal[] limit = (BigDecimal[]) row.getArray(first + 2).getArray();
        Integer[] softPercent = (Integer[]) row.getArray(first + 3).getArray();
        List<SetBudget> out = new ArrayList<>(period.length);
        for (int i = 0; i < period.length; i++) {
            out.add(new SetBudget(period[i], provider[i], limit[i], softPercent[i]));
        }
        return out;
    }

    private static List<SetBudget> setBudgets(Connection connection, String ownerId) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(SET_BUDGETS)) {
            select.setString(1, ownerId);
            try (ResultSet row = select.executeQuery()) {
                row.next();
                return readSetBudgets(row, 1);
            }
        }
    }

    /**
     * The owner's budgets in {@link Budget#LOCK_ORDER}: the defaults of every provider (properties),
     * each replaced by the operator's budget of every provider for its period, and the operator's
     * budgets for one provider.
     */
    private List<Budget> withDefaults(List<SetBudget> set) {
        List<Budget> out = new ArrayList<>();
        for (Period period : Period.values()) {
            Optional<BigDecimal> fallback = period == Period.DAY ? config.dayUsd() : config.monthUsd();
            fallback.ifPresent(limit -> out.add(new Budget(period, null, limit, config.softPercent(), true)));
        }
        for (SetBudget row : set) {
            Period period = Period.fromWireName(row.period()).orElseThrow();
            String provider = row.provider().equals(EVERY_PROVIDER) ? null : row.provider();
            if (provider == null) {
                out.removeIf(b -> b.period() == period && b.provider() == null);
            }
            out.add(new Budget(period, provider, row.limitUsd(), row.softPercent(), false));
        }
        out.sort(Budget.LOCK_ORDER);
        return out;
    }

    /**
     * Opens the owner's window of a budget the first time it meets a period, with what the owner's
     * attempts it holds claimed in the period already cost (a budget set mid-month counts the month's
     * spend).
     */
    private static void openWindow(Connection connection, String ownerId, Budget budget, LocalDate startsOn)
            throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO spend_window (owner_id, period, starts_on, provider, spent_usd)"
                        + " SELECT ?, ?, ?, ?, (SELECT coalesce(sum(a.cost_usd), 0) FROM attempt a JOIN job j"
                        + " ON j.id = a.job_id WHERE j.owner_id = ? AND a.sent_at >= ? AND a.sent_at < ?"
                        + " AND ? IN ('', a.provider))"
                        + " WHERE NOT EXISTS (SELECT 1 FROM spend_window WHERE owner_id = ? AND period = ?"
                        + " AND starts_on = ? AND provider = ?) ON CONFLICT DO NOTHING")) {
            LocalDate endsBefore = budget.period().nextStart(startsOn);
            insert.setString(1, ownerId);
            insert.setString(2, budget.period().wireName());
            insert.setObject(3, startsOn);
            insert.setString(4, budget.providerColumn());
            insert.setString(5, ownerId);
            insert.setObject(6, startsOn.atStartOfDay().atOffset(ZoneOffset.UTC));
            insert.setObject(7, endsBefore.atStartOfDay().atOffset(ZoneOffset.UTC));
            insert.setString(8, budget.providerColumn());
            insert.setString(9, ownerId);
            insert.setString(10, budget.period().wireName());
            insert.setObject(11, startsOn);
            insert.setString(12, budget.providerColumn());
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
                        + " WHERE owner_id = ? AND period = ? AND starts_on = ? AND provider = ?"
                        + " AND spent_usd + reserved_usd + ? <= ? RETURNING spent_usd, reserved_usd")) {
            update.setBigDecimal(1, amount);
            update.setString(2, ownerId);
            update.setString(3, budget.period().wireName());
            update.setObject(4, startsOn);
            update.setString(5, budget.providerColumn());
            update.setBigDecimal(6, amount);
            update.setBigDecimal(7, budget.limitUsd());
            try (ResultSet row = update.executeQuery()) {
                return row.next()
                        ? Optional.of(budget.standing(startsOn, row.getBigDecimal(1), row.getBigDecimal(2)))
                        : Optional.empty();
            }
        }
    }

    private static void release(Connection connection, String ownerId, Standing window, BigDecimal amount)
            throws SQLException {
        try (PreparedStatement update =
                connection.prepareStatement("UPDATE spend_window SET reserved_usd = reserved_usd - ?"
                        + " WHERE owner_id = ? AND period = ? AND starts_on = ? AND provider = ?")) {
            update.setBigDecimal(1, amount);
            update.setString(2, ownerId);
            update.setString(3, window.period().wireName());
            update.setObject(4, window.startsOn());
            update.setString(5, window.provider() == null ? EVERY_PROVIDER : window.provider());
            update.executeUpdate();
        }
    }

    private static Standing standing(Connection connection, String ownerId, Budget budget, LocalDate startsOn)
            throws SQLException {
        try (PreparedStatement select = connection.prepareStatement("SELECT spent_usd, reserved_usd FROM spend_window"
                + " WHERE owner_id = ? AND period = ? AND starts_on = ? AND provider = ?")) {
            select.setString(1, ownerId);
            select.setString(2, budget.period().wireName());
            select.setObject(3, startsOn);
            select.setString(4, budget.providerColumn());
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
