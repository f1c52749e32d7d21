package dev.jobapi.api.security;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The syntax of a subject (an owner id): what a token's {@code sub} must be and what an operator may
 * name in {@code ?owner=}. Control characters would forge log lines and cannot be stored in
 * PostgreSQL text (NUL); an empty or blank subject would make every such caller one owner.
 */
public final class Subjects {

    public static final int MAX_LENGTH = 255;

    private Subjects() {}

    public static boolean isUsable(JsonNode claim) {
        return claim != null && claim.isTextual() && isUsable(claim.textValue());
    }

    public static boolean isUsable(String subject) {
        return subject != null
                && !subject.isBlank()
                && subject.length() <= MAX_LENGTH
                && subject.strip().equals(subject)
                && subject.chars().noneMatch(Character::isISOControl);
    }
}
