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
import java.util.function.Consumer;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;

/**
 * POST /jobs as a plain queue would do it: authenticate, parse, insert one row, answer 201. No
 * key lookup, no attempt, no outbox row, no timeline: a repeated request makes another row.
 * POST /naive/jobs does the same and hands the job to {@link NaiveWorker} through RabbitMQ:
 * published without a confirm, before the row commits.
 */
@Path("/")
@RolesAllowed("user")
public class BaselineResource {

    private static final String PROBLEM_JSON = "application/problem+json";

    private final EntityManager em;
    private final ObjectMapper mapper;
    private final JsonWebToken token;
    private final Emitter<String> naiveJobs;

    BaselineResource(
            EntityManager em,
            ObjectMapper mapper,
            JsonWebToken token,
            @Channel("naive-jobs") Emitter<String> naiveJobs) {
        this.em = em;
        this.mapper = mapper;
        this.token = token;
        this.naiveJobs = naiveJobs;
    }

    record JobView(UUID id, String state, String idempotencyKey, JsonNode input, String provider, Instant createdAt) {}

    @POST
    @Path("jobs")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Transactional
    public Response create(@HeaderParam("Idempotency-Key") String idempotencyKey, byte[] body) {
        return insert(idempotencyKey, body, job -> {});
    }

    @POST
    @Path("naive/jobs")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Transactional
    public Response createAndPublish(@HeaderParam("Idempotency-Key") String idempotencyKey, byte[] body) {
        return insert(idempotencyKey, body, job -> naiveJobs.send(NaiveWorker.message(mapper, job)));
    }

    private Response insert(String idempotencyKey, byte[] body, Consumer<BaselineJob> inserted) {
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
        inserted.accept(job);
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
