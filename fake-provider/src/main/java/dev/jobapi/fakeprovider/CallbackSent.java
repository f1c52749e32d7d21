package dev.jobapi.fakeprovider;

/**
 * One signed callback the fake provider sent (or could not send), for {@code GET /fake/callbacks}.
 *
 * @param sentAt when it was sent, as an ISO-8601 instant
 * @param target the URL it was posted to, or null when there was none to post to
 * @param attemptId the attempt id the callback carried
 * @param remoteId the completion id the callback carried
 * @param status the HTTP status the receiver answered, or null when no answer came
 * @param error why no answer came (not configured, no provider name in the prompt, connection failure), or null
 */
public record CallbackSent(
        String sentAt, String target, String attemptId, String remoteId, Integer status, String error) {}
