package dev.jobapi.api.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import jakarta.ws.rs.core.Response;

/** The RFC 9457 body, with the short {@code code} API.md promises. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProblemDetails(String type, String title, int status, String detail, String code) {

    public static final String MEDIA_TYPE = "application/problem+json";

    public static Response response(Problem problem, String detail) {
        return Response.status(problem.status())
                .type(MEDIA_TYPE)
                .entity(new ProblemDetails(problem.type(), problem.title(), problem.status(), detail, problem.code()))
                .build();
    }
}
