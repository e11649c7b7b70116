#!/bin/sh
# A stand-in "Archive" job, for `resque-go work --exec 'Archive=examples/jobs/archive.sh'`.
#
# It archives nothing: it prints the arguments it was given (RESQUE_ARGS,
# e.g. [1,"master"]) and succeeds. A real command would do its work here and
# use its exit status to steer the job: 0 success, 75 retry (while attempts
# remain), 76 discard, anything else a failure recorded in `failed` with the
# last stderr lines.
set -eu
echo "archive: job ${RESQUE_JOB_ID:-without id} from queue ${RESQUE_QUEUE}: archiving ${RESQUE_ARGS}"
