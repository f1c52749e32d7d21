package dev.jobapi.api.security;

import jakarta.enterprise.context.RequestScoped;
import java.util.Set;
import org.eclipse.microprofile.jwt.JsonWebToken;

/** The {@link Caller} of the current request, derived from its verified JWT. */
@RequestScoped
public class CurrentCaller {

    private final JsonWebToken token;

    CurrentCaller(JsonWebToken token) {
        this.token = token;
    }

    public Caller get() {
        return new Caller(token.getSubject(), Set.copyOf(token.getGroups()));
    }
}
