package dev.jobapi.api.rest;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The request bodies of the job endpoints. */
final class JobRequests {

    private JobRequests() {}

    /**
     * Body of POST /jobs: a free-form input object, an optional provider name, and an optional
     * ordered list of providers automatic fallback may move to after a definitive failure.
     */
    record CreateJob(
            @Schema(
                            required = true,
                            description = "Free-form; prompt, repository and baseRef are the fields the worker reads")
                    JsonNode input,
            @Schema(description = "A configured provider name; absent: the default provider") String provider,
            @Schema(description = "Providers automatic fallback may move to, in order") List<String> fallback) {}

    /** Body of POST /jobs/{id}/attempts. */
    record RequestAttempt(String provider, Supersede supersede) {}

    /** A reviewer's reason for replacing the open attempts. */
    record Supersede(String reason) {}
}
