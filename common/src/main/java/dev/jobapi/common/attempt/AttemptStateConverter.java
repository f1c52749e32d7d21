package dev.jobapi.common.attempt;

import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Converter;

/** Stores attempt states by their lower-case wire names ('starting', 'succeeded', ...), the values CHECK lists. */
@Converter
public class AttemptStateConverter implements AttributeConverter<AttemptState, String> {

    @Override
    public String convertToDatabaseColumn(AttemptState state) {
        return state == null ? null : state.wireName();
    }

    @Override
    public AttemptState convertToEntityAttribute(String wireName) {
        return wireName == null ? null : AttemptState.fromWireName(wireName);
    }
}
