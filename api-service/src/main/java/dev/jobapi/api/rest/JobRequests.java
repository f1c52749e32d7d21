package dev.jobapi.api.rest;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** The request bodies of the job endpoints. */
final class JobRequests {

    private JobRequests() {}

    /**
     * Body of POST /jobs: a free-form input object, an optional provider name, and an optional
     * ordered list of providers automatic fallback may move to after a definitive failure.
     */
    record CreateJob(JsonNode input, String provider, List<String> fallback) {}

    /** Body of POST /jobs/{id}/attempts. */
    record RequestAttempt(String provider, Supersede supersede) {}

    /** A reviewer's reason for replacing the open attempts. */
    record Supersede(String reason) {}
}
