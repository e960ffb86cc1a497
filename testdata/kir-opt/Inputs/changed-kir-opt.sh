#!/bin/sh
# A kir-opt build whose output differs from the real one's: it prints one
# more line after each run.
"$KIR_OPT_UNDER_TEST" "$@"
status=$?
echo "one more line"
exit $status
