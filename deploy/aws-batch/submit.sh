#!/usr/bin/env bash
# Registers the job definition and submits the fleet as an array job of SHARDS children; each
# child runs the shard AWS_BATCH_JOB_ARRAY_INDEX of --shard-count SHARDS. See the README, "Fleets".
#
#   deploy/aws-batch/submit.sh JOB_QUEUE [SHARDS]
#
# Exit codes: 12 ends a child for good (retryStrategy EXIT), 75 and host failures retry it.
set -euo pipefail
queue=${1:?usage: submit.sh JOB_QUEUE [SHARDS]}
shards=${2:-8}
cd "$(dirname "$0")"
aws batch register-job-definition --cli-input-json file://job-definition.json >/dev/null
aws batch submit-job --job-name tern-fleet --job-queue "$queue" --job-definition tern-fleet \
    --array-properties "size=$shards" --parameters "shards=$shards"
