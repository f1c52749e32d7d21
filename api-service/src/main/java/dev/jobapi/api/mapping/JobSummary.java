package dev.jobapi.api.mapping;

import com.fasterxml.jackson.databind.JsonNode;
import dev.jobapi.common.job.JobState;
import java.time.Instant;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * One job in GET /jobs. A list never carries whole inputs: {@code input} is a preview (the first
 * {@value #PREVIEW_LENGTH} characters of {@code prompt}, {@code repository} and {@code baseRef}) and
 * {@code inputBytes} says how large the stored input is, so a page of 100 jobs costs the same whatever
 * their owners stored. GET /jobs/{id} has the whole input, the attempts and the actions.
 */
public record JobSummary(
        UUID id,
        JobState state,
        String idempotencyKey,
        String inputDigest,
        InputPreview input,
        long inputBytes,
        String provider,
        @Schema(nullable = true) UUID winningAttemptId,
        long version,
        Instant createdAt,
        Instant updatedAt) {

    public static final int PREVIEW_LENGTH = 200;

    /** The start of the input's well-known text fields; null where the input has none. */
    public record InputPreview(
            @Schema(nullable = true) String prompt,
            @Schema(nullable = true) String repository,
            @Schema(nullable = true) String baseRef) {

        /** What intake stores with a job (V17): each field's first {@value #PREVIEW_LENGTH} characters. */
        public static InputPreview of(JsonNode input) {
            return new InputPreview(cut(input.get("prompt")), cut(input.get("repository")), cut(input.get("baseRef")));
        }

        /** A string's text, any other value's JSON text, cut at a code point; null for none or null. */
        private static String cut(JsonNode value) {
            if (value == null || value.isNull()) {
                return null;
            }
            String text = value.isTextual() ? value.textValue() : value.toString();
            int end = 0;
            for (int taken = 0; taken < PREVIEW_LENGTH && end < text.length(); taken++) {
                end += Character.charCount(text.codePointAt(end));
            }
            return text.substring(0, end);
        }
    }
}
