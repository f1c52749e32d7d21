package dev.jobapi.worker.provider;

import dev.jobapi.worker.apply.PatchRules;

/**
 * What one provider call came to, in the terms of the retry decision table
 * (docs/design.md#retry-decision-table).
 */
public sealed interface ProviderOutcome {

    /** The provider's id for the request, when it told us. */
    String remoteId();

    /**
     * What this outcome says against the provider's health (docs/design.md, rule 21), in words: a
     * fault is a provider's own failure (5xx or 429 past every send, unreachable, no answer, a
     * broken stream); null when it answered as a healthy provider does, a refusal of the request
     * and an unusable patch included.
     */
    String fault();

    /** A whole answer. {@code usage} is null when the provider reported none (fail closed). */
    record Completed(String remoteId, byte[] patch, Usage usage) implements ProviderOutcome {
        @Override
        public String fault() {
            return null;
        }
    }

    /**
     * The provider refused (4xx), kept failing (429/5xx past the send bound), broke the stream or cut
     * its answer off at the output limit. {@code usage}: the counts the provider reported for the
     * tokens it spent (a truncated answer), null when it reported none. {@code usageUnknown}: it may
     * have spent tokens it never reported (a broken stream, a truncated answer without usage).
     * {@code providerFault}: the failure is the provider's own, counted against its health.
     */
    record Failed(String remoteId, String reason, Usage usage, boolean usageUnknown, boolean providerFault)
            implements ProviderOutcome {

        public Failed {
            if (usage != null && usageUnknown) {
                throw new IllegalArgumentException("reported usage is not unknown usage");
            }
        }

        @Override
        public String fault() {
            return providerFault ? reason : null;
        }
    }

    /** Sent, then the answer was lost: the provider may have done the work. */
    record Unknown(String remoteId, String reason) implements ProviderOutcome {
        @Override
        public String fault() {
            return reason;
        }
    }

    /**
     * The provider declined the request and announced how long to wait (a rate limit), and no send
     * of it was taken: the attempt goes back to waiting, unclaimed, with nothing spent.
     */
    record Held(String reason) implements ProviderOutcome {
        @Override
        public String remoteId() {
            return null;
        }

        @Override
        public String fault() {
            return null;
        }
    }

    /**
     * A whole answer as the provider gave it (a stream, a lookup, a callback): {@link Completed} when
     * it is a usable patch by {@link PatchRules}, else {@link Failed} with the reason "unusable
     * output: ..." and the usage the provider reported, so it is never stored as a result, elected or
     * applied, and fallback may follow as after any failure.
     */
    static ProviderOutcome answer(String remoteId, byte[] patch, Usage usage) {
        return PatchRules.unusable(patch)
                .<ProviderOutcome>map(why -> new Failed(remoteId, UNUSABLE + why, usage, usage == null, false))
                .orElseGet(() -> new Completed(remoteId, patch, usage));
    }

    /** How the reason of an answer that is no usable patch starts. */
    String UNUSABLE = "unusable output: ";

    /** Token counts as the provider reported them. */
    record Usage(int promptTokens, int completionTokens) {}
}
