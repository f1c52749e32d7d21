package dev.jobapi.api.rest;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

/**
 * The pages problem types point at (RFC 9457 section 3.1.1: a type URI should resolve to
 * documentation for people): one short page per code of the catalogue, and an index. No token
 * needed; nothing on them depends on the caller.
 */
@Path(ProblemTypeResource.PATH)
@PermitAll
@Produces(MediaType.TEXT_HTML)
public class ProblemTypeResource {

    static final String PATH = Problem.PAGES_PATH;

    @Operation(operationId = "listProblemTypes", summary = "Every problem type this API answers with")
    @APIResponse(responseCode = "200", description = "An HTML index of the problem types")
    @GET
    public String index() {
        String items = Arrays.stream(Problem.values())
                .map(p -> "<li><a href=\"" + PATH + "/" + p.code() + "\">" + p.code() + "</a> (" + p.status() + "): "
                        + escaped(p.title()) + "</li>")
                .collect(Collectors.joining("\n"));
        return page("Problem types of jobapi", "<ul>\n" + items + "\n</ul>");
    }

    @Operation(operationId = "getProblemType", summary = "The page of one problem type")
    @APIResponse(responseCode = "200", description = "An HTML page: title, status and code")
    @APIResponse(responseCode = "404", description = "not-found: no problem type has this code")
    @GET
    @Path("{code}")
    public String problem(@PathParam("code") String code) {
        Problem problem = Problem.ofCode(code)
                .orElseThrow(() -> new ProblemException(Problem.NOT_FOUND, "No problem type has this code."));
        return page(
                problem.title(),
                "<p>HTTP status " + problem.status() + ", <code>code</code>: <code>" + problem.code() + "</code>.</p>\n"
                        + "<p>Answered as <code>application/problem+json</code> (RFC 9457). Clients switch on"
                        + " <code>code</code>; the <code>detail</code> member says what happened this time and"
                        + " what to send instead.</p>\n"
                        + "<p><a href=\"" + PATH + "\">All problem types</a></p>");
    }

    private static String page(String title, String body) {
        return "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>" + escaped(title)
                + "</title></head>\n<body>\n<h1>" + escaped(title) + "</h1>\n" + body + "\n</body>\n</html>\n";
    }

    private static String escaped(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
