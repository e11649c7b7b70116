#!/bin/sh
# A stand-in for your own job command, for `resque-go work --exec '*=examples/jobs/run-job.sh'`.
#
# resque-go runs the command once per job (with /bin/sh -c, in its own process
# group): the raw payload, exactly as queued, is on stdin, and RESQUE_CLASS,
# RESQUE_QUEUE, RESQUE_ARGS (the args JSON), RESQUE_WORKER and RESQUE_JOB_ID
# (when the payload has an id) are in the environment. Exit 0 is success.
set -eu
payload=$(cat)
echo "run-job: class=${RESQUE_CLASS} queue=${RESQUE_QUEUE} id=${RESQUE_JOB_ID:-none} args=${RESQUE_ARGS}"
echo "run-job: payload=${payload}"
