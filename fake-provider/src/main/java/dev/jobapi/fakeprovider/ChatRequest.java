package dev.jobapi.fakeprovider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/** The parts of an OpenAI chat-completions request body that the fake provider acts on. */
record ChatRequest(
        String model, String prompt, boolean stream, boolean includeUsage, ObjectNode metadata, String attemptId) {

    /** Reads a parsed request body, answering 400 like OpenAI when a required part is missing or mistyped. */
    static ChatRequest from(JsonNode body) {
        if (!body.isObject()) {
            throw invalid("The request body must be a JSON object.");
        }
        JsonNode model = body.get("model");
        if (model == null || !model.isTextual() || model.asText().isBlank()) {
            throw invalid("You must provide a model parameter.");
        }
        JsonNode messages = body.get("messages");
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw invalid("'messages' must be a non-empty array.");
        }
        JsonNode metadata = body.path("metadata");
        if (!metadata.isMissingNode() && !metadata.isNull() && !metadata.isObject()) {
            throw invalid("'metadata' must be an object.");
        }
        ObjectNode metadataObject =
                metadata.isObject() ? ((ObjectNode) metadata).deepCopy() : JsonNodeFactory.instance.objectNode();
        JsonNode attemptId = metadataObject.get("attempt_id");
        return new ChatRequest(
                model.asText(),
                prompt(messages),
                body.path("stream").asBoolean(false),
                body.path("stream_options").path("include_usage").asBoolean(false),
                metadataObject,
                attemptId == null || attemptId.isNull() ? null : attemptId.asText());
    }

    private static String prompt(JsonNode messages) {
        List<String> contents = new ArrayList<>();
        for (JsonNode message : messages) {
            JsonNode content = message.path("content");
            if (content.isTextual()) {
                contents.add(content.asText());
            } else if (content.isArray()) {
                // OpenAI also accepts content as a list of parts; only text parts make up the prompt.
                for (JsonNode part : content) {
                    if (part.path("text").isTextual()) {
                        contents.add(part.get("text").asText());
                    }
                }
            }
        }
        // A line break between messages keeps the last word of one from merging with the first of the next.
        return String.join("\n", contents);
    }

    private static ProviderError invalid(String message) {
        return new ProviderError(400, message);
    }
}
