package dev.jobapi.api.security;

import java.util.Set;

/** Who is calling: the token's subject (the owner of what they create) and their roles. */
public record Caller(String subject, Set<String> roles) {

    public static final String USER = "user";
    public static final String REVIEWER = "reviewer";
    public static final String OPERATOR = "operator";

    public boolean isReviewer() {
        return roles.contains(REVIEWER);
    }

    /** Reviewers and operators see every owner's jobs; users only their own. */
    public boolean seesAllJobs() {
        return roles.contains(REVIEWER) || roles.contains(OPERATOR);
    }

    public boolean mayRead(String ownerId) {
        return seesAllJobs() || subject.equals(ownerId);
    }
}
