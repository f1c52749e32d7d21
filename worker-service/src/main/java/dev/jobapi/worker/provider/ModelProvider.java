package dev.jobapi.worker.provider;

import java.util.Optional;
import java.util.UUID;

/** One adapter per provider API, behind one interface; the worker calls it once per attempt. */
public interface ModelProvider {

    /**
     * Calls the provider for one attempt. Only the transport send may be repeated inside (same
     * request key); the answer is never regenerated.
     */
    ProviderOutcome generate(ProviderRequest request);

    /**
     * What the provider knows of an earlier request of ours whose answer we lost, found by the
     * provider's id for it or by our attempt id in its metadata: {@link ProviderOutcome.Completed},
     * or {@link ProviderOutcome.Failed} with the reported usage for an answer that was cut off at
     * the output limit (paid for, never applied). Empty when it has nothing (yet), or cannot tell:
     * the attempt then stays unknown; nothing guesses.
     */
    Optional<ProviderOutcome> lookup(UUID attemptId, String remoteId);
}
