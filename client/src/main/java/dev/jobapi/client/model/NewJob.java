package dev.jobapi.client.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The body of POST /jobs. {@code input} is any JSON object; {@code provider} null means the API's
 * default; {@code fallback} lists the providers automatic fallback may move to, in order; {@code
 * ttlSeconds}, when set, is the job's deadline counted from its intake: no provider call starts
 * for it after that.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NewJob(ObjectNode input, String provider, List<String> fallback, Long ttlSeconds) {

    /** A job without a deadline. */
    public NewJob(ObjectNode input, String provider, List<String> fallback) {
        this(input, provider, fallback, null);
    }

    /** The usual input: a prompt against a repository at a base ref; null fields are left out. */
    public static NewJob prompt(String prompt, String repository, String baseRef) {
        ObjectNode input = JsonNodeFactory.instance.objectNode();
        input.put("prompt", prompt);
        if (repository != null) {
            input.put("repository", repository);
        }
        if (baseRef != null) {
            input.put("baseRef", baseRef);
        }
        return new NewJob(input, null, null);
    }

    public NewJob withProvider(String provider) {
        return new NewJob(input, provider, fallback);
    }

    public NewJob withFallback(List<String> fallback) {
        return new NewJob(input, provider, fallback);
    }
}
