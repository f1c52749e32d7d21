package dev.jobapi.fakeprovider;

/** An OpenAI-style error to answer instead of a result; thrown by the routes, written by {@link FakeProvider}. */
final class ProviderError extends RuntimeException {

    private final int status;

    ProviderError(int status, String message) {
        // No stack trace: these are expected answers, never bugs, and they are never shown to the client anyway.
        super(message, null, false, false);
        this.status = status;
    }

    int status() {
        return status;
    }
}
