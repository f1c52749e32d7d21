package dev.jobapi.api.rest;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The request bodies of the job endpoints. */
final class JobRequests {

    private JobRequests() {}

    /**
     * Body of POST /jobs: a free-form input object, an optional provider name, an optional ordered
     * list of providers automatic fallback may move to after a definitive failure, and an optional
     * deadline (an instant or a time to live).
     */
    record CreateJob(
            @Schema(
                            required = true,
                            description = "Free-form; prompt, repository and baseRef are the fields the worker reads")
                    JsonNode input,
            @Schema(description = "A configured provider name; absent: the default provider") String provider,
            @Schema(description = "Providers automatic fallback may move to, in order") List<String> fallback,
            @Schema(
                            description = "No provider call starts for the job from this time on (RFC 3339 with an"
                                    + " offset, at most 30 days ahead); a job with nothing open and nothing won"
                                    + " then ends cancelled, cancelReason 'expired'. Not with ttlSeconds.",
                            format = "date-time")
                    String deadline,
            @Schema(
                            description = "The deadline as seconds after intake (1 to 2,592,000). Not with deadline.",
                            minimum = "1",
                            maximum = "2592000")
                    Long ttlSeconds) {}

    /** Body of POST /jobs/{id}/attempts. */
    record RequestAttempt(String provider, Supersede supersede) {}

    /** A reviewer's reason for replacing the open attempts. */
    record Supersede(String reason) {}
}
