package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.security.Subjects;
import dev.jobapi.api.service.UsageLedger;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/** GET /usage: the caller's token totals by provider and day, from the ledger; operators for anyone. */
@Path("/usage")
@RolesAllowed({Caller.USER, Caller.REVIEWER, Caller.OPERATOR})
@Produces(MediaType.APPLICATION_JSON)
public class UsageResource {

    private static final int MAX_DAYS = 366;

    /** The totals of one owner over a range of days. */
    @Schema(name = "OwnerUsage")
    public record Usage(String owner, LocalDate from, LocalDate to, List<UsageLedger.DayTotal> days) {}

    private final CurrentCaller currentCaller;
    private final UsageLedger ledger;
    private final Clock clock;

    UsageResource(CurrentCaller currentCaller, UsageLedger ledger, Clock clock) {
        this.currentCaller = currentCaller;
        this.ledger = ledger;
        this.clock = clock;
    }

    @Operation(
            operationId = "getUsage",
            summary = "Tokens used per day and provider, for the caller (or, for an operator, any owner)")
    @APIResponse(responseCode = "200", description = "Daily totals over the range (default: the last 30 days)")
    @APIResponse(responseCode = "400", description = "invalid-query (owner, from, to or the range)")
    @APIResponse(responseCode = "403", description = "forbidden (another owner's usage without the operator role)")
    @GET
    public Usage usage(
            @QueryParam("owner") String owner, @QueryParam("from") String from, @QueryParam("to") String to) {
        Caller caller = currentCaller.get();
        String subject = owner == null ? caller.subject() : owner;
        if (!Subjects.isUsable(subject)) {
            throw new ProblemException(
                    Problem.INVALID_QUERY,
                    "'owner' must be a subject: 1-" + Subjects.MAX_LENGTH + " characters, no control characters.");
        }
        if (!subject.equals(caller.subject()) && !caller.roles().contains(Caller.OPERATOR)) {
            throw new ProblemException(Problem.FORBIDDEN, "Only operators read another owner's usage.");
        }
        LocalDate last = QueryValues.date("to", to, LocalDate.now(clock.withZone(ZoneOffset.UTC)));
        LocalDate first = QueryValues.date("from", from, last.minusDays(29));
        if (first.isAfter(last) || first.plusDays(MAX_DAYS).isBefore(last)) {
            throw new ProblemException(
                    Problem.INVALID_QUERY,
                    "'from' must not be after 'to', and the range at most " + MAX_DAYS + " days.");
        }
        return new Usage(subject, first, last, ledger.totals(subject, first, last));
    }
}
