package dev.jobapi.worker.provider;

/** One adapter per provider API, behind one interface; the worker calls it once per attempt. */
public interface ModelProvider {

    /**
     * Calls the provider for one attempt. Only the transport send may be repeated inside (same
     * request key); the answer is never regenerated.
     */
    ProviderOutcome generate(ProviderRequest request);
}
