package dev.jobapi.fakeprovider;

/**
 * What the fake provider received and how it answered, so a test can compare the provider's own view with the
 * ledger.
 *
 * @param receivedAt when the request arrived, as an ISO-8601 instant
 * @param path the API route, {@code /v1/chat/completions} or {@code /v1/messages}
 * @param model the model the client asked for
 * @param prompt the concatenated contents of all messages, up to {@link #LOGGED_PROMPT_CHARS} characters
 * @param attemptId our attempt id where the API has a place for it: {@code metadata.attempt_id} (chat completions) or
 *     {@code metadata.user_id} (messages); null when absent
 * @param requestKey the {@code Idempotency-Key} request header, or null
 * @param stream whether the client asked for a stream
 * @param step the scripted step taken, or null when no script matched and the default answer was given
 * @param status the status answered, or null while the request is still being answered (during its delay)
 * @param remoteId the completion id sent to the client, or null when none was sent
 * @param usage the token counts the provider reported, or null when omitted, not reached or not a success
 */
public record ReceivedRequest(
        String receivedAt,
        String path,
        String model,
        String prompt,
        String attemptId,
        String requestKey,
        boolean stream,
        Step step,
        Integer status,
        String remoteId,
        Usage usage) {

    /**
     * How much of a prompt the log keeps: enough for every marker tests and the soak match on, while
     * a client sending half-megabyte inputs for minutes cannot make the log outgrow the heap.
     */
    public static final int LOGGED_PROMPT_CHARS = 16_384;

    static String logged(String prompt) {
        return prompt.length() <= LOGGED_PROMPT_CHARS ? prompt : prompt.substring(0, LOGGED_PROMPT_CHARS);
    }

    /** Provider-reported token counts; deterministic word counts so tests can predict them. */
    public record Usage(int promptTokens, int completionTokens) {

        /** Counts whitespace-separated words of the prompt and the completion, at least one each. */
        static Usage count(String prompt, String completion) {
            return new Usage(words(prompt), words(completion));
        }

        int totalTokens() {
            return promptTokens + completionTokens;
        }

        private static int words(String text) {
            String trimmed = text.strip();
            // A provider never bills zero tokens, and zero would hide a "usage missing" bug behind a valid-looking
            // count.
            return trimmed.isEmpty() ? 1 : trimmed.split("\\s+").length;
        }
    }

    ReceivedRequest answered(int answeredStatus, String answeredRemoteId, Usage answeredUsage) {
        return new ReceivedRequest(
                receivedAt,
                path,
                model,
                prompt,
                attemptId,
                requestKey,
                stream,
                step,
                answeredStatus,
                answeredRemoteId,
                answeredUsage);
    }
}
