package dev.jobapi.api.rest;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import org.jboss.logging.MDC;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * Puts the request's correlation ids (Idempotency-Key, job id) into the logging context, so every
 * log line of the request can be matched with the job's timeline and the worker's lines.
 */
public class CorrelationFilter {

    @ServerRequestFilter
    public void correlate(ContainerRequestContext request) {
        String key = request.getHeaderString(JobResource.IDEMPOTENCY_KEY);
        if (key != null) {
            MDC.put("idempotencyKey", key);
        }
        String jobId = request.getUriInfo().getPathParameters().getFirst("id");
        if (jobId != null) {
            MDC.put("jobId", jobId);
        }
    }

    @ServerResponseFilter
    public void clear(ContainerResponseContext response) {
        MDC.remove("idempotencyKey");
        MDC.remove("jobId");
    }
}
