package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
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
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * GET /admin/spend: what every owner together spent, per provider and UTC day, from the usage
 * ledger (acceptance runs are not in it). The operator console draws it as a chart.
 */
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@Path("/admin/spend")
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class SpendResource {

    /** At most a year at once, like GET /usage: the query groups the ledger's rows of the range. */
    private static final int MAX_DAYS = 366;

    /** The totals of all owners over a range of days, oldest first. */
    public record Spend(LocalDate from, LocalDate to, List<UsageLedger.DayTotal> days) {}

    private final UsageLedger ledger;
    private final Clock clock;

    SpendResource(UsageLedger ledger, Clock clock) {
        this.ledger = ledger;
        this.clock = clock;
    }

    @Operation(operationId = "getSpend", summary = "Tokens spent per provider and day, all owners together")
    @APIResponse(responseCode = "200", description = "Daily totals over the range (default: the last 14 days)")
    @APIResponse(responseCode = "400", description = "invalid-query (from, to or the range)")
    @GET
    public Spend spend(@QueryParam("from") String from, @QueryParam("to") String to) {
        LocalDate last = QueryValues.date("to", to, LocalDate.now(clock.withZone(ZoneOffset.UTC)));
        LocalDate first = QueryValues.date("from", from, last.minusDays(13));
        if (first.isAfter(last) || first.plusDays(MAX_DAYS).isBefore(last)) {
            throw new ProblemException(
                    Problem.INVALID_QUERY,
                    "'from' must not be after 'to', and the range at most " + MAX_DAYS + " days.");
        }
        return new Spend(first, last, ledger.totalsOfAllOwners(first, last));
    }
}
