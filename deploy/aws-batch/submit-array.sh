#!/bin/sh
# submit-array.sh — registers deploy/aws-batch/job-definition.json and submits
# one array job of N children over a manifest (README "Run at scale").  Each
# child gets AWS_BATCH_JOB_ARRAY_INDEX from AWS Batch; infer takes items k
# with k mod N == index, so --shards (the "shards" parameter) must be the
# array size: both come from N here.
#   sh deploy/aws-batch/submit-array.sh QUEUE N [MANIFEST [OUT]]
# Exit codes and retries: retryStrategy in the job definition retries 8 (out
# of memory), 9 (GPU error or none), 13* (130: stopped by SIGTERM, a spot
# reclaim; 137: killed) and a reclaimed host; everything else ends the child
# (2-7 bad model/options/output, 10/11 some items failed: see the shard's
# OUT/failures-I-of-N.jsonl; resubmitting skips the finished items).
set -eu
queue=${1:?usage: submit-array.sh QUEUE N [MANIFEST [OUT]]}
n=${2:?usage: submit-array.sh QUEUE N [MANIFEST [OUT]]}
manifest=${3:-/data/manifest.txt}
out=${4:-/data/out}
here=$(dirname "$0")
aws batch register-job-definition --cli-input-json "file://$here/job-definition.json" >/dev/null
if [ "$n" -eq 1 ]; then # AWS Batch arrays have 2..10000 children: one shard is a plain job
    aws batch submit-job --job-name strix-infer --job-queue "$queue" --job-definition strix-infer \
        --parameters "manifest=$manifest,out=$out,shards=1"
else
    aws batch submit-job --job-name strix-infer --job-queue "$queue" --job-definition strix-infer \
        --array-properties "size=$n" --parameters "manifest=$manifest,out=$out,shards=$n"
fi
