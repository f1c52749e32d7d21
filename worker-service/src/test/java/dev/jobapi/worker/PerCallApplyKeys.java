package dev.jobapi.worker;

import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.worker.service.ApplyKeys;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The postmortem's mutation: apply keys from a per-call counter instead of the content, so a
 * redelivered apply looks new. Enabled only by {@link PostmortemMutationTest}'s profile.
 */
@Alternative
@ApplicationScoped
public class PerCallApplyKeys extends ApplyKeys {

    private final AtomicLong calls = new AtomicLong();

    @Override
    public ApplyKey keyFor(UUID jobId, byte[] patch, String scope) {
        return ApplyKey.of(jobId, Long.toString(calls.incrementAndGet()).getBytes(StandardCharsets.UTF_8), scope);
    }
}
