package dev.jobapi.worker.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.jobapi.worker.config.WorkerConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Optional;
import java.util.UUID;
import org.apache.hc.client5.http.classic.methods.HttpPost;

/**
 * The Anthropic Messages adapter ({@code kind=anthropic}): {@code POST /v1/messages}, streamed. Our
 * attempt id goes in {@code metadata.user_id} (the only metadata field the API has), our request
 * key in the {@code Idempotency-Key} header. The answer's id is the message id from {@code
 * message_start}; until that arrives, the {@code request-id} response header stands in for it.
 * Usage is {@code input_tokens} from {@code message_start} and {@code output_tokens} from {@code
 * message_delta}; an answer missing either has no usage (the pipeline quarantines it). A {@code
 * stop_reason} of {@code max_tokens} means the answer was cut off at the output limit: failed, with
 * its usage.
 */
class AnthropicProvider extends StreamingHttpProvider {

    /** The API version this adapter speaks; Anthropic requires it on every request. */
    static final String API_VERSION = "2023-06-01";

    AnthropicProvider(
            String name,
            WorkerConfig.Provider settings,
            WorkerConfig.Providers transport,
            AnnouncedLimits limits,
            ObjectMapper mapper,
            Clock clock) {
        super(name, settings, transport, limits, mapper, clock);
    }

    @Override
    protected HttpPost streamingRequest(ProviderRequest request) {
        ObjectNode body = mapper.createObjectNode();
        body.put("model", settings.model());
        body.put("max_tokens", settings.maxTokens());
        body.put("stream", true);
        body.putObject("metadata").put("user_id", request.attemptId().toString());
        body.putArray("messages").addObject().put("role", "user").put("content", request.prompt());
        HttpPost post = post("/v1/messages", body.toString().getBytes(StandardCharsets.UTF_8));
        post.setHeader("Accept", "text/event-stream");
        post.setHeader("anthropic-version", API_VERSION);
        post.setHeader("Idempotency-Key", request.requestKey());
        settings.apiKey().ifPresent(key -> post.setHeader("x-api-key", key));
        return post;
    }

    @Override
    protected String requestIdHeader() {
        return "request-id";
    }

    @Override
    protected void onEvent(String event, String data, StreamedAnswer answer) throws IOException {
        JsonNode payload = mapper.readTree(data);
        // The event line and the payload's "type" agree; the payload is what a proxy cannot strip.
        String type = payload.path("type").asText(event == null ? "" : event);
        switch (type) {
            case "message_start" -> {
                JsonNode message = payload.path("message");
                if (message.hasNonNull("id")) {
                    answer.remoteId(message.get("id").asText());
                }
                takeInputTokens(message.path("usage"), answer);
            }
            case "content_block_delta" -> {
                JsonNode delta = payload.path("delta");
                if (delta.path("type").asText().equals("text_delta")) {
                    answer.append(delta.path("text").asText(""));
                }
            }
            case "message_delta" -> {
                if (payload.path("delta").path("stop_reason").asText().equals("max_tokens")) {
                    answer.truncated("stop_reason max_tokens");
                }
                JsonNode usage = payload.path("usage");
                takeInputTokens(usage, answer);
                if (usage.has("output_tokens")) {
                    answer.completionTokens(tokenCount(usage.get("output_tokens"), "output_tokens"));
                }
            }
            case "message_stop" -> answer.complete();
            case "error" -> {
                JsonNode error = payload.path("error");
                answer.error(error.path("type").asText("error") + ": "
                        + error.path("message").asText(""));
            }
            default -> {
                // ping, content_block_start/stop: nothing to take.
            }
        }
    }

    /**
     * Anthropic keeps no retrievable record of a past message: there is no fetch by message id or by
     * metadata. An attempt whose answer was lost therefore stays unknown until a signed callback or a
     * reviewer resolves it; nothing here guesses.
     */
    @Override
    public Optional<ProviderOutcome> lookup(UUID attemptId, String remoteId) {
        return Optional.empty();
    }

    /**
     * Input tokens come with {@code message_start} (newer API versions restate them in {@code
     * message_delta}); the output count that counts is the cumulative one of {@code message_delta},
     * so {@code message_start}'s provisional output count is never taken.
     */
    private void takeInputTokens(JsonNode usage, StreamedAnswer answer) {
        if (usage.has("input_tokens")) {
            answer.promptTokens(tokenCount(usage.get("input_tokens"), "input_tokens"));
        }
    }
}
