package dev.jobapi.common.attempt;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Where a usage record's token counts came from. */
public enum UsageSource {
    /** The provider reported the counts; they are the ledger's truth. */
    PROVIDER_REPORTED,
    /** The provider reported nothing (or the answer was lost); the attempt is quarantined. */
    UNKNOWN;

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static UsageSource fromWireName(String wireName) {
        return valueOf(wireName.toUpperCase(Locale.ROOT));
    }
}
