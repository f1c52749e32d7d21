package dev.jobapi.api.rest;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import jakarta.ws.rs.core.Response;
import java.util.Map;

/**
 * The RFC 9457 body, with the short {@code code} docs/api.md#errors promises and, where a problem
 * has figures a client needs (a budget), extension members beside the standard ones.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProblemDetails(
        String type, String title, int status, String detail, String code, Map<String, Object> extensions) {

    public static final String MEDIA_TYPE = "application/problem+json";

    @JsonAnyGetter
    @Override
    public Map<String, Object> extensions() {
        return extensions;
    }

    public static Response response(Problem problem, String detail) {
        return response(problem, detail, Map.of());
    }

    public static Response response(Problem problem, String detail, Map<String, Object> extensions) {
        return Response.status(problem.status())
                .type(MEDIA_TYPE)
                .entity(new ProblemDetails(
                        problem.type(), problem.title(), problem.status(), detail, problem.code(), extensions))
                .build();
    }
}
