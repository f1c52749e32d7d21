package dev.jobapi.api.service;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import org.jboss.logging.Logger;

/** The provider names a client may use, from configuration. */
@ApplicationScoped
public class ProviderRegistry {

    private static final Logger LOG = Logger.getLogger(ProviderRegistry.class);

    private final JobApiConfig config;

    ProviderRegistry(JobApiConfig config) {
        this.config = config;
    }

    /** Says at startup what clients may name, and plainly when that is nothing. */
    void report(@Observes StartupEvent event) {
        List<String> names = names();
        Optional<String> defaultName = config.providers().defaultProvider();
        if (names.isEmpty()) {
            LOG.warn("No provider is configured (jobapi.providers.names, JOBAPI_PROVIDERS_NAMES): every job is"
                    + " refused with unknown-provider until one is");
        } else {
            LOG.infof("Providers clients may name: %s; default: %s", names, defaultName.orElse("none"));
        }
        defaultName
                .filter(name -> !names.contains(name))
                .ifPresent(name -> LOG.warnf(
                        "The default provider '%s' (jobapi.providers.default-provider) is not among %s: a job that"
                                + " names no provider is refused",
                        name, names));
    }

    /** Every provider a client may name. */
    public List<String> names() {
        return config.providers().names().orElse(List.of());
    }

    /** The same names, the one a job gets when it names none first: the order a page offers them in. */
    public List<String> namesDefaultFirst() {
        List<String> names = new ArrayList<>(names());
        config.providers().defaultProvider().filter(names::remove).ifPresent(name -> names.add(0, name));
        return List.copyOf(names);
    }

    /** 404 {@code not-found} for a provider an operator names that is not configured. */
    public void requireKnown(String provider) {
        if (!names().contains(provider)) {
            throw new ProblemException(
                    Problem.NOT_FOUND, "Provider '" + provider + "' is not configured; known: " + names());
        }
    }

    /** The named provider, or the default when none is named; 422 for a name we do not know. */
    public String resolve(String requested) {
        if (requested == null && config.providers().defaultProvider().isEmpty()) {
            throw new ProblemException(
                    Problem.UNKNOWN_PROVIDER,
                    "The job names no provider and no default provider is configured; known: " + names());
        }
        String name = requested == null ? config.providers().defaultProvider().get() : requested;
        if (!names().contains(name)) {
            throw new ProblemException(
                    Problem.UNKNOWN_PROVIDER, "Provider '" + name + "' is not configured; known: " + names());
        }
        return name;
    }

    /**
     * Checks a job's fallback list: known names, no repeats, not the job's own provider. Returns it
     * joined with commas for the insert (configured names never contain one).
     */
    public String fallbackList(String provider, List<String> fallback) {
        for (String name : fallback) {
            if (name == null) {
                throw new ProblemException(Problem.INVALID_REQUEST, "'fallback' must list provider names.");
            }
            resolve(name);
        }
        if (fallback.contains(provider) || new HashSet<>(fallback).size() < fallback.size()) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'fallback' must name each provider once and not the job's own provider '" + provider + "'.");
        }
        return String.join(",", fallback);
    }
}
