package dev.jobapi.api.service;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.rest.Problem;
import dev.jobapi.api.rest.ProblemException;
import jakarta.enterprise.context.ApplicationScoped;

/** The provider names a client may use, from configuration. */
@ApplicationScoped
public class Providers {

    private final JobApiConfig config;

    Providers(JobApiConfig config) {
        this.config = config;
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
}
