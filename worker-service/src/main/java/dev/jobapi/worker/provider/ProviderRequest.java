package dev.jobapi.worker.provider;

import java.time.Instant;
import java.util.UUID;

/**
 * What the worker asks of a provider: our attempt id and key travel with the prompt. {@code
 * provider} is the attempt's provider name; the adapter for it sends its configured model.
 *
 * @param deadline the time after which the attempt's lease could have run out: {@link
 *     ModelProvider#generate} returns by then whatever the provider does, starts no send once less
 *     than the read timeout is left before it, and calls an answer not whole by then unknown
 * @param guard asked before every send after the first, so a resend never goes out for an attempt
 *     that is no longer ours
 */
public record ProviderRequest(
        UUID attemptId, String requestKey, String provider, String prompt, Instant deadline, SendGuard guard) {}
