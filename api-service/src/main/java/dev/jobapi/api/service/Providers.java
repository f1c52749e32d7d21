package dev.jobapi.api.service;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashSet;
import java.util.List;

/** The provider names a client may use, from configuration. */
@ApplicationScoped
public class Providers {

    private final JobApiConfig config;

    Providers(JobApiConfig config) {
        this.config = config;
    }

    /** Every provider a client may name. */
    public List<String> names() {
        return config.providers().names();
    }

    /** The named provider, or the default when none is named; 422 for a name we do not know. */
    public String resolve(String requested) {
        String name = requested == null ? config.providers().defaultProvider() : requested;
        if (!config.providers().names().contains(name)) {
            throw new ProblemException(
                    Problem.UNKNOWN_PROVIDER,
                    "Provider '" + name + "' is not configured; known: "
                            + config.providers().names());
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
