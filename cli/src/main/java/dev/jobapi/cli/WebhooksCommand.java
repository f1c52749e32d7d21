package dev.jobapi.cli;

import dev.jobapi.client.JobApiClient;
import dev.jobapi.client.model.WebhookDelivery;
import dev.jobapi.client.model.WebhookEndpoint;
import java.io.PrintWriter;
import java.util.List;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code jobctl webhooks}: your webhook endpoints and their delivery logs (docs/api.md, "Webhooks"). */
@Command(
        name = "webhooks",
        description = "Your webhook endpoints: each gets your jobs' events of the kinds it wants, signed"
                + " (Standard Webhooks), retried until answered 2xx.")
final class WebhooksCommand {

    @ParentCommand
    Jobctl jobctl;

    @Spec
    CommandSpec spec;

    @Command(name = "list", description = "Your endpoints.")
    int list(@Mixin OutputFormat output) {
        List<WebhookEndpoint> endpoints = client().webhooks();
        return output.print(spec, endpoints, () -> endpoints.forEach(this::print));
    }

    @Command(
            name = "add",
            description = "Register URL. Prints its signing secret, shown only now: keep it (rotate for a new one).")
    int add(
            @Parameters(paramLabel = "URL") String url,
            @Option(
                            names = "--event",
                            paramLabel = "KIND",
                            description = "An event kind wanted (repeat); default job.completed, job.cancelled,"
                                    + " job.needs_review.")
                    List<String> events,
            @Option(names = "--description", description = "What it is for.") String description,
            @Mixin OutputFormat output) {
        WebhookEndpoint endpoint = client().registerWebhook(url, events, description);
        return output.print(spec, endpoint, () -> {
            print(endpoint);
            out().printf("secret %s%n", endpoint.secret());
        });
    }

    @Command(name = "delete", description = "Delete endpoint ID: nothing more is sent to it.")
    int delete(@Parameters(paramLabel = "ID") UUID id) {
        client().deleteWebhook(id);
        out().printf("%s deleted%n", id);
        return ExitCodes.OK;
    }

    @Command(
            name = "rotate",
            description = "A new signing secret for ID; the old one keeps signing beside it for the overlap (24 h).")
    int rotate(@Parameters(paramLabel = "ID") UUID id, @Mixin OutputFormat output) {
        WebhookEndpoint endpoint = client().rotateWebhookSecret(id);
        return output.print(spec, endpoint, () -> out().printf(
                        "secret %s (the old one signs too until %s)%n",
                        endpoint.secret(), endpoint.previousSecretExpiresAt()));
    }

    @Command(name = "test", description = "Queue a delivery of type webhook.test to ID.")
    int test(@Parameters(paramLabel = "ID") UUID id, @Mixin OutputFormat output) {
        WebhookDelivery delivery = client().testWebhook(id);
        return output.print(spec, delivery, () -> print(delivery));
    }

    @Command(name = "deliveries", description = "ID's delivery log, newest first.")
    int deliveries(
            @Parameters(paramLabel = "ID") UUID id,
            @Option(names = "--state", description = "pending, delivered or failed.") String state,
            @Option(
                            names = "--limit",
                            defaultValue = "50",
                            description = "At most this many (1-500, ${DEFAULT-VALUE}).")
                    int limit,
            @Mixin OutputFormat output) {
        List<WebhookDelivery> deliveries = client().webhookDeliveries(id, state, limit);
        return output.print(spec, deliveries, () -> deliveries.forEach(this::print));
    }

    @Command(name = "retry", description = "Send ID's failed delivery WEBHOOK_ID again, with the same webhook-id.")
    int retry(
            @Parameters(paramLabel = "ID") UUID id,
            @Parameters(paramLabel = "WEBHOOK_ID") String webhookId,
            @Mixin OutputFormat output) {
        WebhookDelivery delivery = client().retryWebhookDelivery(id, webhookId);
        return output.print(spec, delivery, () -> print(delivery));
    }

    private JobApiClient client() {
        return jobctl.client(Jobctl.USER);
    }

    private PrintWriter out() {
        return spec.commandLine().getOut();
    }

    private void print(WebhookEndpoint endpoint) {
        out().printf(
                        "%s  %s  %s%s%n",
                        endpoint.id(),
                        endpoint.url(),
                        String.join(",", endpoint.events()),
                        endpoint.disabledReason() == null ? "" : "  DISABLED: " + endpoint.disabledReason());
    }

    private void print(WebhookDelivery delivery) {
        out().printf(
                        "%s  %s  %s  tries=%d%s%s%n",
                        delivery.webhookId(),
                        delivery.type(),
                        delivery.state(),
                        delivery.attempts(),
                        delivery.jobId() == null ? "" : "  job=" + delivery.jobId(),
                        delivery.lastError() == null ? "" : "  last: " + delivery.lastError());
    }
}
