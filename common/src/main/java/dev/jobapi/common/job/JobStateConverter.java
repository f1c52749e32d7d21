package dev.jobapi.common.job;

import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Converter;

/** Stores job states by their lower-case wire names ('accepted', 'running', ...), the values CHECK lists. */
@Converter
public class JobStateConverter implements AttributeConverter<JobState, String> {

    @Override
    public String convertToDatabaseColumn(JobState state) {
        return state == null ? null : state.wireName();
    }

    @Override
    public JobState convertToEntityAttribute(String wireName) {
        return wireName == null ? null : JobState.fromWireName(wireName);
    }
}
