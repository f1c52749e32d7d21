package dev.jobapi.api.rest;

import com.fasterxml.jackson.databind.JsonNode;

/** The request bodies of the job endpoints. */
final class JobRequests {

    private JobRequests() {}

    /** Body of POST /jobs: a free-form input object and an optional provider name. */
    record CreateJob(JsonNode input, String provider) {}

    /** Body of POST /jobs/{id}/attempts. */
    record RequestAttempt(String provider, Supersede supersede) {}

    /** A reviewer's reason for replacing the open attempts. */
    record Supersede(String reason) {}
}
