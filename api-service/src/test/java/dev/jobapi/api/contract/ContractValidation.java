package dev.jobapi.api.contract;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.report.ValidationReport;
import com.atlassian.oai.validator.restassured.RestAssuredRequest;
import com.atlassian.oai.validator.restassured.RestAssuredResponse;
import io.restassured.RestAssured;
import io.restassured.filter.FilterContext;
import io.restassured.filter.OrderedFilter;
import io.restassured.response.Response;
import io.restassured.specification.FilterableRequestSpecification;
import io.restassured.specification.FilterableResponseSpecification;
import java.lang.reflect.Method;
import java.net.URI;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Checks every REST Assured exchange of the api suite against the OpenAPI document the api serves
 * at /q/openapi, with Atlassian's swagger-request-validator: a request or a response that leaves
 * the document fails the test that made it. A test that sends what the document forbids on purpose
 * (a hostile body, a wrong media type) says so with {@link OutsideTheContract}; its responses are
 * still checked. The management interface (/q/...) is not part of the document and is not checked.
 */
public final class ContractValidation implements OrderedFilter {

    /** A path or a method the document does not serve: a test outside the contract may ask for them. */
    private static final Set<String> NOT_SERVED =
            Set.of("validation.request.path.missing", "validation.request.operation.notAllowed");

    private static final ContractValidation FILTER = new ContractValidation();

    private static volatile OpenApiInteractionValidator validator;
    private static volatile boolean requestsOutsideTheContract;

    private ContractValidation() {}

    /** Installs the check for the test about to run; idempotent, so every test may call it. */
    public static void installFor(Method test) {
        requestsOutsideTheContract = test.isAnnotationPresent(OutsideTheContract.class)
                || test.getDeclaringClass().isAnnotationPresent(OutsideTheContract.class);
        if (!RestAssured.filters().contains(FILTER)) {
            RestAssured.filters(FILTER);
        }
    }

    @Override
    public Response filter(
            FilterableRequestSpecification request, FilterableResponseSpecification expected, FilterContext context) {
        Response response = context.next(request, expected);
        URI uri = URI.create(request.getURI());
        if (uri.getPath().startsWith("/q/")) {
            return response;
        }
        OpenApiInteractionValidator contract = validatorServedAt(uri);
        ValidationReport report = requestsOutsideTheContract
                ? contract.validateResponse(
                        uri.getPath(), Request.Method.valueOf(request.getMethod()), RestAssuredResponse.of(response))
                : contract.validate(RestAssuredRequest.of(request), RestAssuredResponse.of(response));
        List<ValidationReport.Message> errors = report.getMessages().stream()
                .filter(message -> message.getLevel() == ValidationReport.Level.ERROR)
                .filter(message -> !(requestsOutsideTheContract && NOT_SERVED.contains(message.getKey())))
                .toList();
        if (!errors.isEmpty()) {
            throw new AssertionError(request.getMethod() + " " + uri.getPath() + " -> " + response.statusCode()
                    + " leaves the OpenAPI document:\n"
                    + errors.stream()
                            .map(message -> message.getKey() + ": " + message.getMessage())
                            .collect(Collectors.joining("\n")));
        }
        return response;
    }

    private static OpenApiInteractionValidator validatorServedAt(URI exchange) {
        if (validator == null) {
            synchronized (ContractValidation.class) {
                if (validator == null) {
                    String document = RestAssured.given()
                            .noFilters()
                            .baseUri(exchange.getScheme() + "://" + exchange.getHost())
                            .port(exchange.getPort())
                            .get("/q/openapi?format=json")
                            .then()
                            .statusCode(200)
                            .extract()
                            .asString();
                    validator = OpenApiInteractionValidator.createForInlineApiSpecification(document)
                            .build();
                }
            }
        }
        return validator;
    }

    /** After Quarkus's own filters, so the exchange checked is the one that went over the wire. */
    @Override
    public int getOrder() {
        return OrderedFilter.LOWEST_PRECEDENCE;
    }
}
