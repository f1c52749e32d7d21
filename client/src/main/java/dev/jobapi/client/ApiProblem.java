package dev.jobapi.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * The API refused a request with an RFC 9457 problem: {@link #code()} says which, {@link #detail()}
 * says why in words. Thrown once retrying could not change the answer (or retries ran out).
 */
public class ApiProblem extends RuntimeException {

    private final int status;
    private final ProblemCode code;
    private final String rawCode;
    private final String title;
    private final String detail;
    private final JsonNode body;
    private final String requestId;

    ApiProblem(int status, String rawCode, String title, String detail, JsonNode body, String requestId) {
        super(status + " " + (rawCode == null ? "" : rawCode + ": ")
                + (detail != null ? detail : title != null ? title : "no problem details")
                + " (request " + requestId + ")");
        this.requestId = requestId;
        this.status = status;
        this.code = ProblemCode.of(rawCode);
        this.rawCode = rawCode;
        this.title = title;
        this.detail = detail;
        this.body = body;
    }

    public int status() {
        return status;
    }

    /** The code as this client knows it; {@link ProblemCode#UNRECOGNIZED} for a newer one (see {@link #rawCode()}). */
    public ProblemCode code() {
        return code;
    }

    /** The {@code code} member exactly as the API sent it; null when the answer had no problem body. */
    public String rawCode() {
        return rawCode;
    }

    /**
     * The id of the request that got this answer, as the API answered it (X-Request-Id): the one to
     * quote in a support ticket, found in the API's logs.
     */
    public String requestId() {
        return requestId;
    }

    public String title() {
        return title;
    }

    public String detail() {
        return detail;
    }

    /** An extension member beside the standard ones (e.g. {@code budgetTokens} of budget-exceeded). */
    public Optional<JsonNode> extension(String name) {
        return Optional.ofNullable(body).map(b -> b.get(name));
    }

    public boolean is(ProblemCode expected) {
        return code == expected;
    }
}
