package dev.jobapi.api.problem;

import dev.jobapi.api.config.JobApiConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;
import java.util.Map;

/** Makes the problem+json answers of the catalogue, with absolute type URIs under the public base. */
@ApplicationScoped
public class Problems {

    private final String base;

    Problems(JobApiConfig config) {
        String configured = config.publicBaseUri().toString();
        this.base = configured.endsWith("/") ? configured.substring(0, configured.length() - 1) : configured;
    }

    /** The problem type: an absolute URI whose page ({@link Problem#path()}) describes it. */
    public String type(Problem problem) {
        return base + problem.path();
    }

    public ProblemDetails details(Problem problem, String detail, Map<String, Object> extensions) {
        return new ProblemDetails(type(problem), problem.title(), problem.status(), detail, problem.code(), extensions);
    }

    public Response response(Problem problem, String detail) {
        return response(problem, detail, Map.of());
    }

    public Response response(Problem problem, String detail, Map<String, Object> extensions) {
        return Response.status(problem.status())
                .type(ProblemDetails.MEDIA_TYPE)
                .entity(details(problem, detail, extensions))
                .build();
    }
}
