"""The lit test format for kir goldens (imported by lit.cfg.py).

Lives in a module of its own because lit pickles the format to hand tests
to its worker processes, which a class defined in lit.cfg.py cannot be.
"""
import lit.formats
import lit.Test


class KirShTest(lit.formats.ShTest):
    """ShTest over the .kir files that have a RUN: line.

    Other .kir files (examples, inputs shared by several tests) are data;
    they are checked by RUN lines elsewhere.
    """

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig,
                            localConfig):
        for test in super().getTestsInDirectory(testSuite, path_in_suite,
                                                litConfig, localConfig):
            with open(test.getSourcePath(), encoding="utf-8",
                      errors="replace") as source:
                if "RUN:" in source.read():
                    yield test

    def execute(self, test, litConfig):
        result = super().execute(test, litConfig)
        if result.code == lit.Test.UNSUPPORTED:
            with open(test.getSourcePath(), encoding="utf-8",
                      errors="replace") as source:
                if "REQUIRES:" not in source.read():
                    return lit.Test.Result(
                        lit.Test.FAIL,
                        "UNSUPPORTED without a REQUIRES: line: a test that "
                        "cannot run here must say what it needs\n" +
                        (result.output or ""))
        return result
