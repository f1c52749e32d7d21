package dev.jobapi.client.model;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import com.fasterxml.jackson.annotation.JsonProperty;

/** A job's state as the API names it; {@link #UNRECOGNIZED} stands for a state added after this client. */
public enum JobState {
    @JsonProperty("accepted")
    ACCEPTED,
    @JsonProperty("running")
    RUNNING,
    /** An attempt's outcome is unknown: a reviewer's supersession or a late result moves the job on. */
    @JsonProperty("needs_review")
    NEEDS_REVIEW,
    @JsonProperty("completed")
    COMPLETED,
    @JsonProperty("cancelled")
    CANCELLED,
    @JsonEnumDefaultValue
    UNRECOGNIZED;

    /** Completed and cancelled jobs never change state again. */
    public boolean isTerminal() {
        return this == COMPLETED || this == CANCELLED;
    }

    /** The name the API uses on the wire and in {@code ?state=}. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
