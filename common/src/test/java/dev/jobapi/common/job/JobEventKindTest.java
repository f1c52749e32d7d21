package dev.jobapi.common.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The timeline's catalogue: one wire name per kind, never two kinds under one name. */
class JobEventKindTest {

    @Test
    void everyKindHasItsOwnWireNameOfTheFormSubjectDotWhat() {
        List<String> names =
                Arrays.stream(JobEventKind.values()).map(JobEventKind::wireName).toList();
        assertThat(names).doesNotHaveDuplicates();
        assertThat(names).allMatch(name -> name.matches("[a-z]+\\.[a-z_]+"), "subject.what, lower case");
    }

    @Test
    void theWireNamesTheChaosCheckerAndTheBenchReadAreInTheCatalogue() {
        // chaos/Checker and bench/sql select these stored strings; renaming one would blind them.
        assertThat(Arrays.stream(JobEventKind.values()).map(JobEventKind::wireName))
                .contains("job.created", "job.completed", "job.cancelled", "attempt.requested");
    }
}
