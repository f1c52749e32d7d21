package dev.jobapi.worker.provider;

import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.common.provider.HeldAttempts;
import dev.jobapi.common.provider.ProviderHealth;
import dev.jobapi.worker.config.WorkerConfig;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.inject.Singleton;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Caps on calls in flight (issue 32): a provider's ({@code jobapi.provider.<name>.max-in-flight})
 * and an owner's (owner_share, or {@code jobapi.provider-gate.owner-max-in-flight}), across every
 * worker. A call is in flight from its claim until its outcome is recorded, or its lease runs out (a
 * dead worker's call stops counting with its lease). The claim asks here in its own transaction,
 * holding a transaction-scoped advisory lock per capped provider and owner, so two claims never both
 * take the last slot. A claim past a cap is held, like a shut gate (rule 21), never failed; the
 * gate's round announces held attempts again as slots free up.
 */
@Singleton
public class InFlightCaps {

    /**
     * Providers whose held attempts wait for something else: a pause (rule 19), a breaker not closed
     * or an announced limit (rule 21). A free slot does not announce theirs, which would only be held
     * again; their own resume or reopening does.
     */
    static final String SHUT = "SELECT provider FROM provider_pause UNION SELECT provider FROM provider_health"
            + " WHERE state <> 'closed' OR limited_until > statement_timestamp()";

    private static final String IN_FLIGHT = ProviderHealth.IN_FLIGHT;

    private final EntityManager em;
    private final CurrentTransaction transaction;
    private final HeldAttempts held;
    private final WorkerConfig config;

    InFlightCaps(EntityManager em, CurrentTransaction transaction, HeldAttempts held, WorkerConfig config) {
        this.em = em;
        this.transaction = transaction;
        this.held = held;
        this.config = config;
    }

    /**
     * In the claim's transaction, plain or JTA: why this call may not go now, if a cap is reached.
     * {@code ownersSetCap} is the cap an operator set for the owner ({@code owner_share}), as the
     * claim read it; without one the configured default holds.
     */
    public Optional<String> refusal(String provider, String owner, Optional<Integer> ownersSetCap) {
        return transaction.onConnection(connection -> {
            Optional<Integer> providerCap = providerCap(provider);
            if (providerCap.isPresent()) {
                lock(connection, "in-flight provider", provider);
                long calls = count(
                        connection, "SELECT count(*) FROM attempt a WHERE a.provider = ? AND " + IN_FLIGHT, provider);
                if (calls >= providerCap.get()) {
                    return Optional.of("provider " + provider + " has " + calls + " calls in flight, its cap");
                }
            }
            Optional<Integer> ownerCap =
                    ownersSetCap.or(() -> config.providerGate().ownerMaxInFlight());
            if (ownerCap.isPresent()) {
                lock(connection, "in-flight owner", owner);
                long calls = count(
                        connection,
                        "SELECT count(*) FROM attempt a JOIN job j ON j.id = a.job_id WHERE j.owner_id = ? AND "
                                + IN_FLIGHT,
                        owner);
                if (calls >= ownerCap.get()) {
                    return Optional.of("owner " + owner + " has " + calls + " calls in flight, their cap");
                }
            }
            return Optional.empty();
        });
    }

    /**
     * One round of the gate's loop: for each capped provider and each capped owner with held
     * attempts, announces again as many of them as there are free slots.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void announceFreed() {
        for (Map.Entry<String, WorkerConfig.Provider> provider :
                config.provider().entrySet()) {
            provider.getValue().maxInFlight().ifPresent(cap -> announceFreeSlots(provider.getKey(), cap));
        }
        // Owners with held attempts and a cap: each one's free slots.
        @SuppressWarnings("unchecked")
        List<Object[]> owners = em.createNativeQuery("SELECT j.owner_id, coalesce(s.max_in_flight, NULLIF(?1, 0))"
                        + " - (SELECT count(*) FROM attempt a JOIN job o ON o.id = a.job_id WHERE o.owner_id = j.owner_id"
                        + " AND " + IN_FLIGHT + ")"
                        + " FROM attempt h JOIN job j ON j.id = h.job_id LEFT JOIN owner_share s ON s.owner_id = j.owner_id"
                        + " WHERE h.state = 'starting' AND h.lease_owner IS NULL AND h.provider NOT IN (" + SHUT + ")"
                        + " AND coalesce(s.max_in_flight, NULLIF(?1, 0)) IS NOT NULL"
                        + " GROUP BY j.owner_id, s.max_in_flight")
                .setParameter(1, config.providerGate().ownerMaxInFlight().orElse(0)) // 0: no default cap
                .getResultList();
        for (Object[] owner : owners) {
            int free = ((Number) owner[1]).intValue();
            if (free > 0) {
                held.announceAgainOfOwner((String) owner[0], free, SHUT);
            }
        }
    }

    /**
     * A call of the provider ended (its outcome recorded): when the provider is capped, its free slot
     * goes to a held attempt now rather than at the gate's next round, which would leave it idle for
     * up to a round (2 s) each time. Advice only: the round announces whatever this misses. A
     * provider with no cap opens no transaction: an empty one cost each call 2 % of the worker's CPU
     * (bench/ANALYSIS.md).
     */
    public void callEnded(String provider) {
        providerCap(provider)
                .ifPresent(cap -> QuarkusTransaction.requiringNew().run(() -> announceFreeSlots(provider, cap)));
    }

    /** Announces again as many of the provider's held attempts as it has free slots, unless its gate is shut. */
    private void announceFreeSlots(String provider, int cap) {
        if (shut(provider)) {
            return;
        }
        long calls = ((Number)
                        em.createNativeQuery("SELECT count(*) FROM attempt a WHERE a.provider = ?1 AND " + IN_FLIGHT)
                                .setParameter(1, provider)
                                .getSingleResult())
                .longValue();
        if (calls < cap) {
            held.announceAgain(provider, (int) (cap - calls));
        }
    }

    private boolean shut(String provider) {
        return !em.createNativeQuery("SELECT 1 FROM (" + SHUT + ") shut WHERE provider = ?1")
                .setParameter(1, provider)
                .getResultList()
                .isEmpty();
    }

    private Optional<Integer> providerCap(String provider) {
        WorkerConfig.Provider settings = config.provider().get(provider);
        return settings == null ? Optional.empty() : settings.maxInFlight();
    }

    private static void lock(Connection connection, String what, String name) throws SQLException {
        try (PreparedStatement lock =
                connection.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?))")) {
            lock.setString(1, what);
            lock.setString(2, name);
            lock.execute();
        }
    }

    private static long count(Connection connection, String sql, String value) throws SQLException {
        try (PreparedStatement count = connection.prepareStatement(sql)) {
            count.setString(1, value);
            try (ResultSet row = count.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }
}
