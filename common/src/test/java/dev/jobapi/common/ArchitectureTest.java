package dev.jobapi.common;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.jobapi.common.testing.ArchitectureRules;

/** The layering of common's production classes: no package cycle, nothing above it, no fake. */
@AnalyzeClasses(packages = ArchitectureRules.COMMON, importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    @ArchTest
    static final ArchRule packagesOfCommonFormNoCycle =
            ArchitectureRules.noPackageCyclesBelow(ArchitectureRules.COMMON);

    @ArchTest
    static final ArchRule commonDependsOnNeitherService = ArchitectureRules.noDependencyOnEitherService();

    @ArchTest
    static final ArchRule commonNeverDependsOnTheFakeProvider = ArchitectureRules.noDependencyOnTheFakeProvider();
}
