package dev.jobapi.api.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.common.digest.Sha256;
import jakarta.inject.Singleton;
import jakarta.ws.rs.core.CacheControl;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;

/**
 * Conditional GETs of a JSON view: the entity tag is the SHA-256 of the bytes sent, so it changes
 * exactly when what the caller would read changes (a job's attempts and actions included, which
 * the job's own version does not cover), and a poll with the tag it last saw in If-None-Match is
 * answered 304 with no body. The views are private to their caller and always revalidated.
 */
@Singleton
public class ConditionalReads {

    private static final CacheControl PRIVATE_REVALIDATED = CacheControl.valueOf("private, no-cache");

    private final ObjectMapper mapper;

    ConditionalReads(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    public Response okOrNotModified(Request request, Object view) {
        byte[] json;
        try {
            json = mapper.writeValueAsBytes(view);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a view that cannot be written as JSON", e);
        }
        EntityTag tag = new EntityTag(Sha256.hex(json));
        Response.ResponseBuilder notModified = request.evaluatePreconditions(tag);
        Response.ResponseBuilder answer =
                notModified != null ? notModified : Response.ok(json, MediaType.APPLICATION_JSON_TYPE);
        return answer.tag(tag).cacheControl(PRIVATE_REVALIDATED).build();
    }
}
