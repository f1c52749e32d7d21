package dev.jobapi.bench.baseline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.annotation.security.RolesAllowed;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.net.URI;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * POST /jobs as a plain queue would do it: authenticate, parse, insert one row, answer 201. No
 * key lookup, no attempt, no outbox row, no timeline: a repeated request makes another row.
 */
@Path("/jobs")
@RolesAllowed("user")
public class BaselineResource {

    private static final String PROBLEM_JSON = "application/problem+json";

    private final EntityManager em;
    private final ObjectMapper mapper;
    private final JsonWebToken token;

    BaselineResource(EntityManager em, ObjectMapper mapper, JsonWebToken token) {
        this.em = em;
        this.mapper = mapper;
        this.token = token;
    }

    record JobView(UUID id, String state, String idempotencyKey, JsonNode input, String provider, Instant createdAt) {}

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Transactional
    public Response create(@HeaderParam("Idempotency-Key") String idempotencyKey, byte[] body) {
        if (idempotencyKey == null || idempotencyKey.isBlank()) {
            return badRequest("idempotency-key-missing", "The Idempotency-Key header is required.");
        }
        JsonNode tree;
        try {
            tree = mapper.readTree(body);
        } catch (IOException e) {
            return badRequest("invalid-request", "The body is not JSON.");
        }
        JsonNode input = tree == null ? null : tree.get("input");
        if (input == null || !input.isObject()) {
            return badRequest("invalid-request", "'input' is required and must be a JSON object.");
        }
        BaselineJob job = new BaselineJob();
        job.id = UUID.randomUUID();
        job.ownerId = token.getSubject();
        job.idempotencyKey = idempotencyKey;
        job.input = input.toString();
        job.provider = tree.path("provider").asText("fake-a");
        job.state = "accepted";
        job.createdAt = Instant.now();
        em.persist(job);
        return Response.created(URI.create("/jobs/" + job.id))
                .entity(new JobView(job.id, job.state, job.idempotencyKey, input, job.provider, job.createdAt))
                .build();
    }

    private static Response badRequest(String code, String detail) {
        return Response.status(Response.Status.BAD_REQUEST)
                .type(PROBLEM_JSON)
                .entity(Map.of(
                        "type", "about:blank", "title", "Bad Request", "status", 400, "code", code, "detail", detail))
                .build();
    }
}
