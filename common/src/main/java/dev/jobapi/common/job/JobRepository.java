package dev.jobapi.common.job;

import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;
import java.util.Optional;
import java.util.UUID;

/** Reads jobs; writes go through {@link Job}'s guarded methods or the idempotent intake insert. */
@ApplicationScoped
public class JobRepository implements PanacheRepositoryBase<Job, UUID> {

    public Optional<Job> findByOwnerAndKey(String ownerId, String idempotencyKey) {
        return find("ownerId = ?1 and idempotencyKey = ?2", ownerId, idempotencyKey)
                .firstResultOptional();
    }

    /** Locks the job row for the rest of the transaction, serialising decisions about its attempts. */
    public Optional<Job> findForUpdate(UUID id) {
        return findByIdOptional(id, LockModeType.PESSIMISTIC_WRITE);
    }
}
