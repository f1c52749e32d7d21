package dev.jobapi.api.rest;

import dev.jobapi.api.security.Caller;
import dev.jobapi.api.security.CurrentCaller;
import dev.jobapi.api.service.ProviderPauses;
import dev.jobapi.api.service.ProviderRegistry;
import dev.jobapi.api.service.SpendAdmin;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/**
 * GET /me: who the server takes the caller for, which operator console sections it will serve
 * them and which providers a job may name, so the page draws controls from the server's decision
 * and configuration rather than from claims it decoded itself or a list of its own (as a job's
 * {@code actions} do for the job view).
 */
@Path("/me")
@RolesAllowed({Caller.USER, Caller.REVIEWER, Caller.OPERATOR})
@Produces(MediaType.APPLICATION_JSON)
public class CallerResource {

    /**
     * The console sections, in the order the page shows them; each is backed by the /admin
     * endpoints named in docs/api.md and needs the operator role, like they do.
     */
    static final List<String> CONSOLE_SECTIONS =
            List.of("dead_letters", "quarantine", "kill_switch", "providers", "audit", "spend", "budgets");

    /**
     * The caller as the server sees them: subject, roles (sorted), console sections (empty for
     * non-operators), the providers a job may name, the default first (empty when none is
     * configured: every job is then refused), and those of them an operator has paused (a job may
     * still name one: its attempts wait for the resume), and the caller's money budgets.
     */
    public record Me(
            String subject,
            List<String> roles,
            List<String> console,
            List<String> providers,
            List<String> pausedProviders,
            @Schema(
                            description =
                                    "The caller's money budgets with spent, reserved and remaining; empty when none"
                                            + " applies")
                    List<SpendAdmin.BudgetView> budgets) {}

    private final CurrentCaller currentCaller;
    private final ProviderRegistry providers;
    private final ProviderPauses pauses;
    private final SpendAdmin spend;

    CallerResource(CurrentCaller currentCaller, ProviderRegistry providers, ProviderPauses pauses, SpendAdmin spend) {
        this.currentCaller = currentCaller;
        this.providers = providers;
        this.pauses = pauses;
        this.spend = spend;
    }

    @Operation(
            operationId = "getMe",
            summary = "The caller's subject and roles, the operator console sections the server will serve them,"
                    + " and the providers a job may name")
    @APIResponse(responseCode = "200", description = "The caller")
    @APIResponse(responseCode = "401", description = "Missing, expired or foreign token (unauthenticated)")
    @APIResponse(
            responseCode = "403",
            description = "forbidden (a token with none of the roles user, reviewer, operator)")
    @GET
    public Me me() {
        Caller caller = currentCaller.get();
        List<String> roles = caller.roles().stream().sorted().toList();
        return new Me(
                caller.subject(),
                roles,
                caller.roles().contains(Caller.OPERATOR) ? CONSOLE_SECTIONS : List.of(),
                providers.namesDefaultFirst(),
                pauses.pausedNames(),
                spend.budgets(caller.subject()));
    }
}
