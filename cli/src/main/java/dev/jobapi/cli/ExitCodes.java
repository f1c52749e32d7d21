package dev.jobapi.cli;

/** What jobctl's exit status means; the README's table lists the same. */
final class ExitCodes {

    /** Done; for --wait, the job completed; for providers accept, the run passed. */
    static final int OK = 0;
    /** The api answered with a problem (a 4xx, or a 5xx it kept answering): code and detail on stderr. */
    static final int REFUSED = 1;
    /** The command line was wrong (picocli's usage error code). */
    static final int USAGE = 2;
    /** No answer from the api after the retries; a submit's key is kept, so running it again resumes. */
    static final int UNREACHABLE = 3;
    /** Waited as long as --timeout allowed and the job or run was still going. */
    static final int STILL_RUNNING = 4;
    /** Finished, not as hoped: the job was cancelled, or the acceptance run failed. */
    static final int UNSUCCESSFUL = 5;

    private ExitCodes() {}
}
