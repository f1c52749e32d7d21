package dev.jobapi.api.deadletter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.LongString;
import dev.jobapi.common.digest.Sha256;
import dev.jobapi.common.text.StoredText;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One message as the broker dead-lettered it, read once: the key that makes its row unique, the
 * attempt it names (none for a message that is not an attempt message) and what the broker's
 * {@code x-death} header says about its deaths.
 *
 * @param key the publisher's message-id ({@code id:...}), or for a message without one a digest of
 *     its body and its death history ({@code sha256:...}): the same for every redelivery of it
 */
public record DeadLetterMessage(
        String key,
        String sourceQueue,
        UUID attemptId,
        UUID jobId,
        String reason,
        String deathQueue,
        long deathCount,
        Instant firstDeathAt,
        Instant lastDeathAt,
        Long deliveryCount,
        byte[] body,
        ObjectNode headers) {

    /** The broker's reason for a message it dropped at its queue's delivery limit (quorum queues). */
    public static final String DELIVERY_LIMIT = "delivery_limit";

    /** Headers the broker writes about deaths and deliveries; a fresh copy of the message carries none. */
    private static final List<String> BROKER_HEADERS = List.of(
            "x-death",
            "x-first-death-exchange",
            "x-first-death-queue",
            "x-first-death-reason",
            "x-last-death-exchange",
            "x-last-death-queue",
            "x-last-death-reason",
            "x-delivery-count");

    static DeadLetterMessage read(
            ObjectMapper mapper, String sourceQueue, AMQP.BasicProperties properties, byte[] body) {
        Map<String, Object> headers = properties.getHeaders() == null ? Map.of() : properties.getHeaders();
        UUID attemptId = null;
        UUID jobId = null;
        try {
            JsonNode json = mapper.readTree(body);
            if (json != null && json.isObject()) {
                attemptId = uuid(json.path("attemptId").asText(null));
                jobId = uuid(json.path("jobId").asText(null));
            }
        } catch (IOException | IllegalArgumentException notAnAttemptMessage) {
            // Poison: stored as it is, with no attempt.
        }
        if (attemptId == null) {
            jobId = null;
        }
        String reason = null;
        String deathQueue = null;
        long deathCount = 0;
        Instant first = null;
        Instant last = null;
        if (headers.get("x-death") instanceof List<?> deaths) {
            for (Object death : deaths) {
                if (death instanceof Map<?, ?> entry) {
                    deathCount += entry.get("count") instanceof Number n ? n.longValue() : 0;
                    Instant at = entry.get("time") instanceof Date d ? d.toInstant() : null;
                    if (reason == null) { // the newest death comes first
                        reason = text(entry.get("reason"));
                        deathQueue = text(entry.get("queue"));
                        last = at;
                    }
                    first = at;
                }
            }
        }
        Long deliveryCount = headers.get("x-delivery-count") instanceof Number n ? n.longValue() : null;
        ObjectNode json = (ObjectNode) toJson(headers);
        String messageId = properties.getMessageId();
        String key = messageId != null && !messageId.isBlank()
                ? "id:" + StoredText.of(messageId)
                : "sha256:" + Sha256.hex(new String(body, StandardCharsets.UTF_8) + "|" + json.path("x-death"));
        return new DeadLetterMessage(
                key,
                sourceQueue,
                attemptId,
                jobId,
                reason,
                deathQueue,
                deathCount,
                first,
                last,
                deliveryCount,
                body,
                json);
    }

    /** Whether the broker dropped it at a delivery limit (not a worker's rejection, not a poison message). */
    public boolean diedAtDeliveryLimit() {
        return attemptId != null && DELIVERY_LIMIT.equals(reason);
    }

    /**
     * The properties of a fresh copy for the work queue: the application's headers (the trace
     * context) kept, the broker's record of deaths and deliveries left behind.
     */
    public static AMQP.BasicProperties freshCopy(AMQP.BasicProperties original, Map<String, Object> extra) {
        Map<String, Object> headers = new HashMap<>();
        if (original.getHeaders() != null) {
            headers.putAll(original.getHeaders());
        }
        BROKER_HEADERS.forEach(headers::remove);
        headers.putAll(extra);
        return original.builder().headers(headers).build();
    }

    /** The stored headers as AMQP headers for a replay: the application's text and numbers, no broker record. */
    public static Map<String, Object> amqpHeaders(JsonNode stored) {
        Map<String, Object> headers = new HashMap<>();
        if (stored != null) {
            stored.fields().forEachRemaining(field -> {
                if (BROKER_HEADERS.contains(field.getKey())) {
                    return;
                }
                JsonNode value = field.getValue();
                if (value.isTextual()) {
                    headers.put(field.getKey(), value.asText());
                } else if (value.isIntegralNumber()) {
                    headers.put(field.getKey(), value.asLong());
                } else if (value.isBoolean()) {
                    headers.put(field.getKey(), value.asBoolean());
                }
            });
        }
        return headers;
    }

    /** AMQP header values (long strings, dates, tables, arrays) as JSON PostgreSQL can store. */
    private static JsonNode toJson(Object value) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        if (value instanceof Map<?, ?> map) {
            ObjectNode node = f.objectNode();
            map.forEach((k, v) -> node.set(StoredText.of(String.valueOf(k)), toJson(v)));
            return node;
        }
        if (value instanceof List<?> list) {
            ArrayNode node = f.arrayNode();
            list.forEach(v -> node.add(toJson(v)));
            return node;
        }
        if (value instanceof Date date) {
            return f.textNode(date.toInstant().toString());
        }
        if (value instanceof Number n) {
            return n instanceof Double || n instanceof Float
                    ? f.numberNode(n.doubleValue())
                    : f.numberNode(n.longValue());
        }
        if (value instanceof Boolean b) {
            return f.booleanNode(b);
        }
        if (value == null) {
            return f.nullNode();
        }
        if (value instanceof byte[] bytes) {
            return f.textNode(StoredText.of(new String(bytes, StandardCharsets.UTF_8)));
        }
        return f.textNode(StoredText.of(text(value)));
    }

    private static String text(Object value) {
        if (value == null) {
            return null;
        }
        return value instanceof LongString s ? s.toString() : String.valueOf(value);
    }

    private static UUID uuid(String text) {
        return text == null ? null : UUID.fromString(text);
    }
}
