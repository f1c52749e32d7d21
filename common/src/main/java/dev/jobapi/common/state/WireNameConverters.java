package dev.jobapi.common.state;

import dev.jobapi.common.attempt.AttemptState;
import dev.jobapi.common.job.JobState;
import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Converter;

/** Stores state enums by their lower-case wire names, the values the CHECK constraints list. */
public final class WireNameConverters {

    private WireNameConverters() {}

    /** Job states as 'accepted', 'running', ... */
    @Converter
    public static class JobStateConverter implements AttributeConverter<dev.jobapi.common.job.JobState, String> {
        @Override
        public String convertToDatabaseColumn(JobState state) {
            return state == null ? null : state.wireName();
        }

        @Override
        public JobState convertToEntityAttribute(String wireName) {
            return wireName == null ? null : JobState.fromWireName(wireName);
        }
    }

    /** Attempt states as 'starting', 'succeeded', ... */
    @Converter
    public static class AttemptStateConverter implements AttributeConverter<AttemptState, String> {
        @Override
        public String convertToDatabaseColumn(AttemptState state) {
            return state == null ? null : state.wireName();
        }

        @Override
        public AttemptState convertToEntityAttribute(String wireName) {
            return wireName == null ? null : AttemptState.fromWireName(wireName);
        }
    }
}
