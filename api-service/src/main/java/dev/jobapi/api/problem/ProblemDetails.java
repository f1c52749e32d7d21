package dev.jobapi.api.problem;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * The RFC 9457 body, with the short {@code code} docs/api.md#errors promises, the {@code requestId}
 * of the request it answers (the response's X-Request-Id), {@code retryable} (whether the same
 * request, sent again unchanged, may get another answer: {@link Problem#retryable()}) and, where a
 * problem has figures a client needs (a budget), extension members beside the standard ones.
 * {@link Problems} makes them.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProblemDetails(
        String type,
        String title,
        int status,
        String detail,
        String code,
        String requestId,
        boolean retryable,
        Map<String, Object> extensions) {

    public static final String MEDIA_TYPE = "application/problem+json";

    @JsonAnyGetter
    @Override
    public Map<String, Object> extensions() {
        return extensions;
    }
}
