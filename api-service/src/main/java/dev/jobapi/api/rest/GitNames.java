package dev.jobapi.api.rest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import java.util.regex.Pattern;

/**
 * The git names a job's input may carry, checked at intake so that nothing a worker hands to git or
 * writes into a log line can smuggle in a second line, an option or a revision expression.
 * {@code baseRef} follows {@code git check-ref-format --allow-onelevel} (plus: no leading '-');
 * {@code repository} is a name or owner/name of letters, digits, '.', '_' and '-'.
 */
final class GitNames {

    static final int MAX_LENGTH = 255;

    static final String REF_RULE = "a branch or tag name as git check-ref-format allows: at most " + MAX_LENGTH
            + " characters, no control characters, spaces or any of ~ ^ : ? * [ \\, no '..', '@{', '//',"
            + " no component starting with '.' or ending with '.lock', not starting with '-' or '/',"
            + " not ending with '/' or '.', not '@'";

    static final String REPOSITORY_RULE = "a repository name or owner/name of letters, digits, '.', '_' and '-',"
            + " each part 1-100 characters not starting with '.' or '-'";

    private static final Pattern REPOSITORY_PART = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,99}");

    private GitNames() {}

    /** Checks {@code repository} and {@code baseRef} of a job input when present; a 400 with the rule. */
    static void requireValid(JsonNode input) {
        JsonNode baseRef = input.get("baseRef");
        if (baseRef != null && !(baseRef.isTextual() && isRefName(baseRef.textValue()))) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'input.baseRef' must be " + REF_RULE + ".");
        }
        JsonNode repository = input.get("repository");
        if (repository != null && !(repository.isTextual() && isRepositoryName(repository.textValue()))) {
            throw new ProblemException(Problem.INVALID_REQUEST, "'input.repository' must be " + REPOSITORY_RULE + ".");
        }
    }

    static boolean isRefName(String name) {
        if (name.isEmpty()
                || name.length() > MAX_LENGTH
                || name.equals("@")
                || name.startsWith("-")
                || name.startsWith("/")
                || name.endsWith("/")
                || name.endsWith(".")
                || name.contains("..")
                || name.contains("@{")
                || name.contains("//")) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= 0x20 || c == 0x7f || "~^:?*[\\".indexOf(c) >= 0 || Character.isISOControl(c)) {
                return false;
            }
        }
        for (String component : name.split("/")) {
            if (component.startsWith(".") || component.endsWith(".lock")) {
                return false;
            }
        }
        return true;
    }

    static boolean isRepositoryName(String name) {
        String[] parts = name.split("/", -1);
        if (parts.length > 2) {
            return false;
        }
        for (String part : parts) {
            if (!REPOSITORY_PART.matcher(part).matches() || part.equals("..")) {
                return false;
            }
        }
        return true;
    }
}
