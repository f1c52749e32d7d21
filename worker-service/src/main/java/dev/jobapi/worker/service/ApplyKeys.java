package dev.jobapi.worker.service;

import dev.jobapi.common.apply.ApplyKey;
import dev.jobapi.worker.config.WorkerConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Issues apply keys. The real key is derived from what is applied. The per-call counter exists only
 * as the mutation check of the postmortem test (jobapi.apply.per-call-key-mutation): with it, a
 * redelivered apply looks new, and that test must fail.
 */
@ApplicationScoped
public class ApplyKeys {

    private final boolean perCallMutation;
    private final AtomicLong calls = new AtomicLong();

    ApplyKeys(WorkerConfig config) {
        this.perCallMutation = config.apply().perCallKeyMutation();
    }

    public ApplyKey keyFor(UUID jobId, byte[] patch, String scope) {
        if (perCallMutation) {
            byte[] counter = Long.toString(calls.incrementAndGet()).getBytes(StandardCharsets.UTF_8);
            return ApplyKey.of(jobId, counter, scope);
        }
        return ApplyKey.of(jobId, patch, scope);
    }
}
