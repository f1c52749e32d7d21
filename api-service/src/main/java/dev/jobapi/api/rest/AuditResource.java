package dev.jobapi.api.rest;

import dev.jobapi.api.security.Caller;
import dev.jobapi.api.service.AuditTrailQueries;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** The audit trail of operators' and reviewers' actions, newest first, for operators. */
// Every operation answers these; they are declared once for the class.
@APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
@APIResponse(responseCode = "403", description = "forbidden (operators only)")
@Tag(name = OpenApiContract.OPERATORS_TAG)
@Path("/admin/audit")
@RolesAllowed(Caller.OPERATOR)
@Produces(MediaType.APPLICATION_JSON)
public class AuditResource {

    private static final int MAX_PAGE = 500;

    private final AuditTrailQueries auditTrail;

    AuditResource(AuditTrailQueries auditTrail) {
        this.auditTrail = auditTrail;
    }

    @Operation(operationId = "listAudit", summary = "Operator and reviewer actions, newest first")
    @APIResponse(responseCode = "200", description = "Audit records")
    @APIResponse(responseCode = "400", description = "invalid-request")
    @GET
    public List<AuditTrailQueries.Entry> audit(
            @QueryParam("before") String beforeValue, @QueryParam("limit") String limitValue) {
        long before = QueryValues.whole("before", beforeValue, Long.MAX_VALUE, 1, Long.MAX_VALUE);
        int limit = (int) QueryValues.whole("limit", limitValue, 50, 1, MAX_PAGE);
        return auditTrail.entries(before, limit);
    }
}
