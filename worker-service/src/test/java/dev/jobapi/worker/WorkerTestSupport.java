package dev.jobapi.worker;

import com.rabbitmq.client.AMQP;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.testing.TestBroker;
import dev.jobapi.common.testing.TestDatabase;
import dev.jobapi.fakeprovider.DemoRepository;
import dev.jobapi.fakeprovider.FakeProvider;
import dev.jobapi.fakeprovider.ReceivedRequest;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.revwalk.RevCommit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Real PostgreSQL, real RabbitMQ, the fake provider and a real git repository. Tests insert rows as
 * the API would, publish the attempt message as the relay would, and watch the worker.
 */
public abstract class WorkerTestSupport {

    @Inject
    protected EntityManager em;

    @Inject
    protected BrokerConnection broker;

    protected FakeProvider fake() {
        return FakeProviderResource.fake;
    }

    @BeforeEach
    @AfterEach
    void resetState() {
        TestBroker.purge(broker);
        TestDatabase.reset(em);
        fake().clearScripts();
    }

    /** A job as POST /jobs makes it, with a prompt the fake provider's scripts can match. */
    protected UUID aJob(String prompt) {
        UUID id = UUID.randomUUID();
        String input = "{\"baseRef\":\"main\",\"prompt\":\"" + prompt + "\",\"repository\":\"demo\"}";
        execute("INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, state, version,"
                + " created_at, updated_at) VALUES ('" + id + "', 'alice', 'key-" + id + "', 'sha256:test', '"
                + input + "', 'fake-a', 'accepted', 0, now(), now())");
        return id;
    }

    /** A job at fake-a whose fallback list names {@code fallback}, in order. */
    protected UUID aJobWithFallback(String prompt, String... fallback) {
        UUID id = aJob(prompt);
        execute("UPDATE job SET fallback_providers = '{" + String.join(",", fallback) + "}' WHERE id = '" + id + "'");
        return id;
    }

    /** An acceptance run of the provider that finished {@code ago} in {@code state}, as a worker records it. */
    protected void anAcceptanceRun(String provider, String state, Duration ago) {
        Instant finished = Instant.now().minus(ago);
        execute("INSERT INTO provider_acceptance (id, provider, state, requested_by, requested_at, started_at,"
                + " finished_at, tasks_total, tasks_done, tasks_passed) VALUES ('" + UUID.randomUUID() + "', '"
                + provider + "', '" + state + "', 'otto', '" + finished + "', '" + finished + "', '" + finished
                + "', 3, 3, " + ("passed".equals(state) ? 3 : 1) + ")");
    }

    /** A starting attempt of the job at the provider. */
    protected UUID aStartingAttempt(UUID jobId, String provider) {
        UUID id = UUID.randomUUID();
        execute("INSERT INTO attempt (id, job_id, provider, state, request_key, created_at, updated_at) VALUES ('"
                + id + "', '" + jobId + "', '" + provider + "', 'starting', 'attempt-" + id + "', '"
                + Instant.now() + "', now())");
        return id;
    }

    /** What the outbox relay would publish for the attempt. */
    protected void publish(UUID attemptId, UUID jobId) {
        publishRaw("{\"attemptId\":\"" + attemptId + "\",\"jobId\":\"" + jobId + "\"}");
    }

    /** What the API's outbox relay does: publishes every unsent row and marks it sent. */
    protected int relayOutbox() {
        List<?> rows = QuarkusTransaction.requiringNew().call(() -> em.createNativeQuery(
                        "UPDATE outbox SET sent_at = now() WHERE sent_at IS NULL" + " RETURNING attempt_id, job_id")
                .getResultList());
        for (Object row : rows) {
            Object[] ids = (Object[]) row;
            publish((UUID) ids[0], (UUID) ids[1]);
        }
        return rows.size();
    }

    protected void publishRaw(String body) {
        publishRaw(body, Map.of());
    }

    /** Publishes as the relay does, with these AMQP headers (a {@code traceparent}, say). */
    protected void publishRaw(String body, Map<String, Object> headers) {
        broker.withChannel(channel -> {
            channel.confirmSelect();
            channel.basicPublish(
                    AttemptTopology.EXCHANGE,
                    AttemptTopology.ROUTING_KEY,
                    new AMQP.BasicProperties.Builder()
                            .contentType("application/json")
                            .deliveryMode(2)
                            .headers(headers)
                            .build(),
                    body.getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(5_000);
            return null;
        });
    }

    /**
     * Runs {@code work} as a consumer's thread runs a delivery: on a thread with no CDI request
     * context (a test method has one), where a step runs in a plain transaction. Its failure is
     * thrown here as it was thrown there.
     */
    protected static <T> T onAConsumersThread(Callable<T> work) {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            return thread.submit(work).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            if (e.getCause() instanceof Error failure) {
                throw failure;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new IllegalStateException(e);
        } finally {
            thread.shutdownNow();
        }
    }

    protected String attemptState(UUID attemptId) {
        return text("SELECT state FROM attempt WHERE id = '" + attemptId + "'");
    }

    /** The attempt's timeline events of this kind. */
    protected long events(UUID attempt, String kind) {
        return count("SELECT count(*) FROM job_event WHERE attempt_id = '" + attempt + "' AND kind = '" + kind + "'");
    }

    protected String jobState(UUID jobId) {
        return text("SELECT state FROM job WHERE id = '" + jobId + "'");
    }

    protected long count(String sql) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em.createNativeQuery(sql).getSingleResult()).longValue());
    }

    protected String text(String sql) {
        return QuarkusTransaction.requiringNew().call(() -> {
            List<?> rows = em.createNativeQuery(sql).getResultList();
            return rows.isEmpty() || rows.get(0) == null ? null : rows.get(0).toString();
        });
    }

    protected void execute(String sql) {
        QuarkusTransaction.requiringNew().run(() -> em.createNativeQuery(sql).executeUpdate());
    }

    /** Stores the demo repository's patch as the attempt's generation, under the digest given. */
    protected void storeGeneration(UUID attemptId, String digest) {
        storeGeneration(attemptId, digest, DemoRepository.defaultPatch());
    }

    /** Stores {@code patch} as the attempt's generation, as a path that skipped the adapters' checks would. */
    protected void storeGeneration(UUID attemptId, String digest, String patch) {
        execute("INSERT INTO generation (attempt_id, patch, output_digest, created_at) VALUES ('" + attemptId
                + "', convert_to('" + patch.replace("'", "''") + "', 'UTF8'), '" + digest + "', now())");
    }

    /** Records 5 + 8 tokens as alice's, reported by fake-a, for the attempt. */
    protected void storeReportedUsage(UUID attemptId) {
        execute("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) VALUES ('" + attemptId + "', 'alice', 'fake-a', 5, 8, 'provider_reported', now())");
    }

    protected List<ReceivedRequest> requestsMatching(String text) {
        return fake().requests().stream().filter(r -> r.prompt().contains(text)).toList();
    }

    /** Commits on the job's branch that carry an Idempotency-Key trailer. */
    protected long commitsOnJobBranch(UUID jobId) throws IOException, GitAPIException {
        try (Git git = Git.open(FakeProviderResource.repository.toFile())) {
            Ref branch = git.getRepository().exactRef("refs/heads/jobapi/" + jobId);
            if (branch == null) {
                return 0;
            }
            long commits = 0;
            for (RevCommit commit : git.log().add(branch.getObjectId()).call()) {
                commits += commit.getFullMessage().contains("Idempotency-Key: ") ? 1 : 0;
            }
            return commits;
        }
    }

    protected List<String> deadLetters() {
        return TestBroker.drain(broker, AttemptTopology.DEAD_LETTER_QUEUE);
    }
}
