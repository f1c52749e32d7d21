package dev.jobapi.worker.service;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.UUID;

/**
 * Reads one top-level field of a job's stored input (a JSON object) as text, as
 * {@code readTree(input).path(name).asText(whenAbsent)} does, without building the tree: the claim
 * reads the prompt and the apply the base ref of every job, and the two trees were 3 % of the
 * worker's CPU samples (bench/ANALYSIS.md).
 *
 * <p>The same answers as the tree's: a string is read as text, any other wanted value as a tree
 * node of its own (absent or null gives {@code whenAbsent}, an object or an array "", a number the
 * node's text), every other value skipped unread.
 */
final class JobInputFields {

    private JobInputFields() {}

    static String text(ObjectMapper mapper, UUID jobId, String input, String name, String whenAbsent) {
        try (JsonParser parser = mapper.createParser(input)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return whenAbsent;
            }
            String found = whenAbsent;
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                boolean wanted = name.equals(parser.currentName());
                JsonToken value = parser.nextToken();
                if (wanted && value == JsonToken.VALUE_STRING) {
                    found = parser.getText(); // a string is its node's text: no node for the usual case
                } else if (wanted) {
                    JsonNode node = value == JsonToken.VALUE_NULL ? null : parser.readValueAsTree();
                    found = node == null ? whenAbsent : node.asText(whenAbsent);
                } else {
                    parser.skipChildren();
                }
            }
            return found;
        } catch (IOException e) {
            throw new IllegalStateException("Stored input of job " + jobId + " is not JSON", e);
        }
    }
}
