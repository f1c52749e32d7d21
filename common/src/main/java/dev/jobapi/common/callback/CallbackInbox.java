package dev.jobapi.common.callback;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The inbox of verified provider callbacks. The API stores them; the worker's reconciliation reads
 * them before it asks the provider (docs/design.md, rule 5), so a callback and a lookup lead to the
 * same recording, election and apply.
 */
@ApplicationScoped
public class CallbackInbox {

    private final EntityManager em;

    CallbackInbox(EntityManager em) {
        this.em = em;
    }

    /** Stores the first callback for its attempt; returns false when one was stored before. */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean store(ProviderCallback callback, Instant receivedAt) {
        return em.createNativeQuery("INSERT INTO provider_callback (attempt_id, provider, remote_id, output,"
                                + " prompt_tokens, completion_tokens, signed_at, received_at)"
                                + " VALUES (?1, ?2, ?3, ?4, CAST(?5 AS integer), CAST(?6 AS integer), ?7, ?8)"
                                + " ON CONFLICT (attempt_id) DO NOTHING")
                        .setParameter(1, callback.attemptId())
                        .setParameter(2, callback.provider())
                        .setParameter(3, callback.remoteId())
                        .setParameter(4, callback.output())
                        .setParameter(5, callback.promptTokens())
                        .setParameter(6, callback.completionTokens())
                        .setParameter(7, callback.signedAt())
                        .setParameter(8, receivedAt)
                        .executeUpdate()
                == 1;
    }

    public Optional<ProviderCallback> find(UUID attemptId) {
        @SuppressWarnings("unchecked")
        List<Object[]> rows = em.createNativeQuery("SELECT provider, remote_id, output, prompt_tokens,"
                        + " completion_tokens, signed_at FROM provider_callback WHERE attempt_id = ?1")
                .setParameter(1, attemptId)
                .getResultList();
        return rows.stream()
                .findFirst()
                .map(row -> new ProviderCallback(
                        attemptId,
                        (String) row[0],
                        (String) row[1],
                        (byte[]) row[2],
                        (Integer) row[3],
                        (Integer) row[4],
                        (Instant) row[5]));
    }
}
