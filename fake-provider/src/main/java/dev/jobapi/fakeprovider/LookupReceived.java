package dev.jobapi.fakeprovider;

/**
 * One read of stored completions (a reconciler's lookup), for {@code GET /fake/lookups}.
 *
 * @param at when it arrived, as an ISO-8601 instant
 * @param attemptId the attempt it asked about: the {@code metadata[attempt_id]} filter, or the stored completion's
 *     own {@code metadata.attempt_id} for a read by id; null when neither names one
 * @param found whether a stored completion answered it
 */
public record LookupReceived(String at, String attemptId, boolean found) {}
