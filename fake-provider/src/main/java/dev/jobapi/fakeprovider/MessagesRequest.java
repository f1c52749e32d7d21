package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** The parts of an Anthropic Messages request that the fake provider acts on. */
record MessagesRequest(String model, String prompt, boolean stream, String attemptId) {

    /** Reads a parsed request body, answering 400 like Anthropic when a required part is missing or mistyped. */
    static MessagesRequest from(JsonNode body) {
        if (!body.isObject()) {
            throw invalid("The request body must be a JSON object.");
        }
        JsonNode model = body.get("model");
        if (model == null || !model.isTextual() || model.asText().isBlank()) {
            throw invalid("model: Field required");
        }
        JsonNode maxTokens = body.get("max_tokens");
        if (maxTokens == null || !maxTokens.isInt() || maxTokens.asInt() < 1) {
            throw invalid("max_tokens: Field required (a positive integer)");
        }
        JsonNode messages = body.get("messages");
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw invalid("messages: at least one message is required");
        }
        JsonNode metadata = body.path("metadata");
        if (!metadata.isMissingNode() && !metadata.isObject()) {
            throw invalid("metadata: Input should be a valid dictionary");
        }
        // user_id is the only metadata field the Messages API has; clients put their own request id there.
        JsonNode userId = metadata.path("user_id");
        return new MessagesRequest(
                model.asText(),
                prompt(messages),
                body.path("stream").asBoolean(false),
                userId.isTextual() ? userId.asText() : null);
    }

    private static String prompt(JsonNode messages) {
        List<String> contents = new ArrayList<>();
        for (JsonNode message : messages) {
            JsonNode content = message.path("content");
            if (content.isTextual()) {
                contents.add(content.asText());
            } else if (content.isArray()) {
                // Content may also be a list of blocks; only text blocks make up the prompt.
                for (JsonNode block : content) {
                    if (block.path("type").asText().equals("text")) {
                        contents.add(block.path("text").asText());
                    }
                }
            }
        }
        return String.join("\n", contents);
    }

    private static ProviderError invalid(String message) {
        return new ProviderError(400, message);
    }
}
