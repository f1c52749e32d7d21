package dev.jobapi.worker.apply;

import dev.jobapi.common.apply.ApplyKey;
import java.util.Optional;

/**
 * An apply target. It receives our apply key with the change (a commit trailer, a header), so an
 * apply whose outcome is unknown is resolved by asking the target first.
 */
public interface Applier {

    /** Names where this applier writes for a job; part of the apply key. */
    String scope(ApplyTarget target);

    /** The target's reference of an earlier apply with this key, if the target has one. */
    Optional<String> findApplied(ApplyKey key, ApplyTarget target);

    /** Applies the patch and returns the target's reference for it (a commit id, a stored marker). */
    String apply(ApplyKey key, byte[] patch, ApplyTarget target);

    /**
     * Whether applying writes only to our own database. Such an apply commits in the transaction
     * that reserves its key and completes the job: exactly once by construction, with nothing on a
     * target to ask about afterwards. Its {@link #apply} writes nothing itself: it names the
     * reference the key's row records, and that row, reserved and marked applied by one statement,
     * is the whole record of the apply.
     */
    default boolean appliesInTheDatabase() {
        return false;
    }
}
