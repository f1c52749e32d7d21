package dev.jobapi.api.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import dev.jobapi.common.digest.Sha256;
import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.BrokerConnection;
import dev.jobapi.common.message.ConfirmedPublisher;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * Reads and replays {@code jobs.attempts.dlq} for operators (docs/design.md, rule 13). Listing
 * takes messages without acking them and closes the channel, which puts them all back. Replay
 * publishes a copy to the work exchange, waits for the broker's confirm, and only then acks
 * (removes) the dead-lettered original: a crash in between leaves a duplicate, never a loss, and a
 * duplicate is harmless to the worker.
 */
@ApplicationScoped
public class DeadLetterQueue {

    /** How many messages one listing or replay looks at; the DLQ is an alarm, not a store. */
    public static final int MAX_SCAN = 10_000;

    /** A dead-lettered message as an operator sees it. */
    public record DeadLetter(
            String id,
            UUID attemptId,
            UUID jobId,
            String body,
            String reason,
            long deathCount,
            Long deliveryCount,
            Instant firstDeathAt,
            Instant lastDeathAt) {}

    /** What a replay did. */
    public record ReplayResult(int replayed, int skipped, List<String> replayedIds, List<String> skippedIds) {}

    private final BrokerConnection broker;
    private final ObjectMapper mapper;
    private final ConfirmedPublisher publisher;

    DeadLetterQueue(BrokerConnection broker, ObjectMapper mapper, ConfirmedPublisher publisher) {
        this.publisher = publisher;
        this.broker = broker;
        this.mapper = mapper;
    }

    /** One page of the DLQ, oldest first as the broker holds them; nothing is consumed. */
    public List<DeadLetter> list(int offset, int limit) {
        return broker.withChannel(channel -> {
            List<DeadLetter> page = new ArrayList<>();
            int seen = 0;
            GetResponse response;
            while (page.size() < limit
                    && seen < MAX_SCAN
                    && (response = channel.basicGet(AttemptTopology.DEAD_LETTER_QUEUE, false)) != null) {
                if (seen++ >= offset) {
                    page.add(describe(response));
                }
            }
            // Closing the channel returns every unacked message to the DLQ.
            return page;
        });
    }

    /**
     * Replays the selected messages ({@code ids}, or every one when {@code all}). A message whose
     * attempt has nothing left to do is skipped and removed: its work is done, and the caller audits it.
     */
    public ReplayResult replay(Set<String> ids, boolean all, Predicate<UUID> nothingLeftToDo) {
        return broker.withChannel(channel -> {
            List<String> replayed = new ArrayList<>();
            List<String> skipped = new ArrayList<>();
            int seen = 0;
            GetResponse response;
            while (seen++ < MAX_SCAN
                    && (response = channel.basicGet(AttemptTopology.DEAD_LETTER_QUEUE, false)) != null) {
                DeadLetter letter = describe(response);
                if (!all && !ids.contains(letter.id())) {
                    continue; // left unacked: back to the DLQ when the channel closes
                }
                long tag = response.getEnvelope().getDeliveryTag();
                if (letter.attemptId() != null && nothingLeftToDo.test(letter.attemptId())) {
                    channel.basicAck(tag, false);
                    skipped.add(letter.id());
                    continue;
                }
                republish(response);
                channel.basicAck(tag, false);
                replayed.add(letter.id());
            }
            return new ReplayResult(replayed.size(), skipped.size(), replayed, skipped);
        });
    }

    /** Messages now in the DLQ (the broker's count of ready messages). */
    public long depth() {
        return broker.withChannel(channel -> (long)
                channel.queueDeclarePassive(AttemptTopology.DEAD_LETTER_QUEUE).getMessageCount());
    }

    /** A confirmed, mandatory copy to the work queue; the original is acked only after it. */
    private void republish(GetResponse response) {
        AMQP.BasicProperties original = response.getProps();
        Map<String, Object> headers = new HashMap<>();
        if (original.getHeaders() != null) {
            headers.putAll(original.getHeaders());
        }
        headers.put("x-replayed-at", new Date());
        publisher.copyToWorkQueue(original.builder().headers(headers).build(), response.getBody());
    }

    private DeadLetter describe(GetResponse response) {
        String body = new String(response.getBody(), StandardCharsets.UTF_8);
        UUID attemptId = null;
        UUID jobId = null;
        try {
            JsonNode json = mapper.readTree(body);
            attemptId = uuid(json.path("attemptId").asText(null));
            jobId = uuid(json.path("jobId").asText(null));
        } catch (IOException | IllegalArgumentException e) {
            // Not an attempt message at all: shown as it is.
        }
        Map<String, Object> headers = response.getProps().getHeaders() == null
                ? Map.of()
                : response.getProps().getHeaders();
        String reason = null;
        long deathCount = 0;
        Instant first = null;
        Instant last = null;
        if (headers.get("x-death") instanceof List<?> deaths) {
            for (Object death : deaths) {
                if (death instanceof Map<?, ?> entry) {
                    deathCount += entry.get("count") instanceof Number n ? n.longValue() : 0;
                    Instant at = entry.get("time") instanceof Date d ? d.toInstant() : null;
                    if (reason == null) {
                        reason = String.valueOf(entry.get("reason")); // newest death first
                        last = at;
                    }
                    first = at;
                }
            }
        }
        Long deliveryCount = headers.get("x-delivery-count") instanceof Number n ? n.longValue() : null;
        String id = Sha256.hex(body + "|" + first).substring(0, 16);
        return new DeadLetter(id, attemptId, jobId, body, reason, deathCount, deliveryCount, first, last);
    }

    private static UUID uuid(String text) {
        return text == null ? null : UUID.fromString(text);
    }
}
