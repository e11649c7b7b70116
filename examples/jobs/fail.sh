#!/bin/sh
# A job command that always fails, to see what `resque-go failed` shows:
#   resque-go work -q low --exec 'Broken=examples/jobs/fail.sh'
#
# A non-zero exit (other than 75 and 76) is a failure: the entry in `failed`
# has exception ResqueGo::ExecFailed, the message "command exited with
# status 1: <last stderr line>" and the last 20 stderr lines as backtrace.
echo "fail: working on ${RESQUE_CLASS} ${RESQUE_ARGS}"
echo "fail: something went wrong (this job always fails)" >&2
exit 1
