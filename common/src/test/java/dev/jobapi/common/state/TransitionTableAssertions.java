package dev.jobapi.common.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.BiPredicate;

/** Checks one row of a transition table: every allowed target passes the guard, every other is refused. */
public final class TransitionTableAssertions {

    private TransitionTableAssertions() {}

    public static <S extends Enum<S>> void assertTargets(
            String machine, S from, Set<S> allowed, BiPredicate<S, S> canMove, BiConsumer<S, S> guard) {
        for (S to : from.getDeclaringClass().getEnumConstants()) {
            if (allowed.contains(to)) {
                assertThat(canMove.test(from, to)).as(from + " -> " + to).isTrue();
                guard.accept(from, to);
            } else {
                assertThat(canMove.test(from, to)).as(from + " -> " + to).isFalse();
                assertThatThrownBy(() -> guard.accept(from, to))
                        .isInstanceOf(IllegalTransitionException.class)
                        .hasMessage("A " + machine + " cannot move from " + from + " to " + to + ".");
            }
        }
    }
}
