package dev.jobapi.worker.service;

import dev.jobapi.common.apply.ApplyKey;
import jakarta.inject.Singleton;
import java.util.UUID;

/**
 * Issues apply keys, derived from what is applied (rule 7): the job, the patch and the target's
 * scope, so a redelivered apply finds the earlier one. A bean of its own so the postmortem's mutation
 * check can replace it (a test-scoped alternative that keys each call anew).
 */
@Singleton
public class ApplyKeys {

    public ApplyKey keyFor(UUID jobId, byte[] patch, String scope) {
        return ApplyKey.of(jobId, patch, scope);
    }
}
