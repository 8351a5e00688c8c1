#!/usr/bin/env bash
# Grade one assignment on Slurm: an array job of N shards, then one merge job that waits for them.
#   deploy/slurm-grade.sh SUBMISSIONS.zip ASSIGNMENT SHARDS SECRET_FILE OUT_DIR
# Run from the repository's root on the cluster (its .venv set up by `make .venv/.installed`),
# or with the commands below wrapped in deploy/Containerfile's image.  Every shard gets the same
# secret; merge refuses shards graded with another one.  The sandbox needs root and unshare
# on the nodes (without, grading degrades loudly).
set -euo pipefail
submissions=$1 assignment=$2 shards=$3 secret_file=$4 out=$5
mkdir -p "$out/shards" "$out/logs"
array=$(sbatch --parsable --job-name="grade-$assignment" --array="1-$shards" --cpus-per-task=2 \
    --output="$out/logs/shard-%a.log" \
    --wrap=".venv/bin/python -m course_grader '$submissions' --assignment '$assignment' \
--shard \$SLURM_ARRAY_TASK_ID/$shards --course-dir '$out/shards/'\$SLURM_ARRAY_TASK_ID \
--secret-seed \"\$(cat '$secret_file')\" --quiet")
sbatch --parsable --job-name="merge-$assignment" --dependency="afterok:$array" \
    --output="$out/logs/merge.log" \
    --wrap=".venv/bin/python -m course_grader merge '$out'/shards/[0-9]* --assignment '$assignment' \
--course-dir '$out/merged'"
