package dev.jobapi.client.model;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import com.fasterxml.jackson.annotation.JsonProperty;

/** An attempt's state as the API names it; {@link #UNRECOGNIZED} stands for a state added after this client. */
public enum AttemptState {
    @JsonProperty("starting")
    STARTING,
    @JsonProperty("unknown")
    UNKNOWN,
    @JsonProperty("failed")
    FAILED,
    @JsonProperty("succeeded")
    SUCCEEDED,
    @JsonProperty("superseded")
    SUPERSEDED,
    @JsonEnumDefaultValue
    UNRECOGNIZED;

    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
