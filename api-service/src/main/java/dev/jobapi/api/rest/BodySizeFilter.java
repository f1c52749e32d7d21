package dev.jobapi.api.rest;

import dev.jobapi.api.config.JobApiConfig;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/** Refuses a declared-too-large body before it is read, with the same problem as a read-too-large one. */
public class BodySizeFilter {

    private final JobApiConfig config;

    BodySizeFilter(JobApiConfig config) {
        this.config = config;
    }

    @ServerRequestFilter(preMatching = true)
    public Response refuseOversizedBody(ContainerRequestContext request) {
        String declared = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
        if (declared == null) {
            return null;
        }
        try {
            if (Long.parseLong(declared.trim()) > config.intake().maxBodyBytes()) {
                return ProblemDetails.response(
                        Problem.PAYLOAD_TOO_LARGE,
                        "The body exceeds " + config.intake().maxBodyBytes() + " bytes.");
            }
        } catch (NumberFormatException e) {
            return ProblemDetails.response(Problem.INVALID_REQUEST, "Content-Length is not a number.");
        }
        return null;
    }
}
