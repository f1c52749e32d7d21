package dev.jobapi.api.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import dev.jobapi.api.config.JobApiConfig;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;

/**
 * Reads request bodies ourselves: size first, then JSON with a nesting bound, then the typed shape
 * with unknown fields refused. Every failure is a precise 400/413 problem, never a 500.
 */
@ApplicationScoped
public class RequestBodies {

    private final ObjectMapper mapper;
    private final JobApiConfig config;

    RequestBodies(ObjectMapper mapper, JobApiConfig config) {
        this.config = config;
        this.mapper = mapper.copy().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
        this.mapper
                .getFactory()
                .setStreamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(config.intake().maxNestingDepth())
                        .build());
    }

    /** The body as a JSON tree; the canonical digest is computed from this tree. */
    public JsonNode tree(byte[] body) {
        if (body.length > config.intake().maxBodyBytes()) {
            throw tooLarge();
        }
        if (body.length == 0) {
            throw new ProblemException(Problem.INVALID_REQUEST, "The request body is empty; send a JSON object.");
        }
        try {
            JsonNode node = mapper.readTree(body);
            if (node == null || !node.isObject()) {
                throw new ProblemException(Problem.INVALID_REQUEST, "The request body must be a JSON object.");
            }
            return node;
        } catch (StreamConstraintsException e) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "The body nests deeper than " + config.intake().maxNestingDepth() + " levels.");
        } catch (JsonProcessingException e) {
            throw new ProblemException(Problem.INVALID_REQUEST, "Malformed JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new ProblemException(Problem.INVALID_REQUEST, "The body could not be read.");
        }
    }

    /** The tree bound to a request type; unknown fields and wrong types are a 400. */
    public <T> T bind(JsonNode tree, Class<T> type) {
        try {
            return mapper.treeToValue(tree, type);
        } catch (UnrecognizedPropertyException e) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "Unknown field '" + e.getPropertyName() + "'; allowed: " + e.getKnownPropertyIds());
        } catch (JsonProcessingException e) {
            String where = e instanceof com.fasterxml.jackson.databind.JsonMappingException m
                    ? " at '" + m.getPathReference() + "'"
                    : "";
            throw new ProblemException(Problem.INVALID_REQUEST, "Wrong type" + where + ": " + e.getOriginalMessage());
        }
    }

    public ProblemException tooLarge() {
        return new ProblemException(
                Problem.PAYLOAD_TOO_LARGE, "The body exceeds " + config.intake().maxBodyBytes() + " bytes.");
    }
}
