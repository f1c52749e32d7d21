package dev.jobapi.common.state;

/** Thrown when code asks a job or an attempt to move to a state its transition table forbids. */
public class IllegalTransitionException extends RuntimeException {

    public IllegalTransitionException(String machine, Enum<?> from, Enum<?> to) {
        super("A " + machine + " cannot move from " + from + " to " + to + ".");
    }
}
