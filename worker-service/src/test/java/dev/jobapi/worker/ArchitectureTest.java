package dev.jobapi.worker;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.jobapi.common.testing.ArchitectureRules;

/**
 * The layering of the worker's production classes: no package cycle, nothing of the api, and nothing
 * of the fake provider (only the worker's tests talk to it).
 */
@AnalyzeClasses(packages = ArchitectureRules.WORKER, importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    @ArchTest
    static final ArchRule packagesOfTheWorkerFormNoCycle =
            ArchitectureRules.noPackageCyclesBelow(ArchitectureRules.WORKER);

    @ArchTest
    static final ArchRule workerNeverDependsOnTheApi = ArchitectureRules.noDependencyOnService(ArchitectureRules.API);

    @ArchTest
    static final ArchRule workerNeverDependsOnTheFakeProvider = ArchitectureRules.noDependencyOnTheFakeProvider();

    @ArchTest
    static final ArchRule scheduledLoopsSkipOverlapsAndShutdown =
            ArchitectureRules.scheduledLoopsSkipOverlapsAndShutdown();
}
