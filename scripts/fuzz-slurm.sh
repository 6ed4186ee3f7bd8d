#!/bin/bash
# A long fuzz campaign as a SLURM job array: each array task runs one shard
# (`funmem fuzz --shard i/n`, no overlap between shards) and saves its
# summary and reduced failures in its own folder. Afterwards, on any node:
#   funmem fuzz --merge "$OUT"/shard-*            # combined summary
#   funmem fuzz --merge "$OUT"/shard-* --json     # as JSON
#
# Submit with, e.g.:
#   SEED=42 PASSES=simplify sbatch --array=0-63 scripts/fuzz-slurm.sh
#SBATCH --job-name=funmem-fuzz
#SBATCH --cpus-per-task=2
#SBATCH --time=01:05:00
set -euo pipefail
FUNMEM=${FUNMEM:-target/release/funmem}
SEED=${SEED:-1}
PASSES=${PASSES:-simplify}
SECONDS_PER_SHARD=${SECONDS_PER_SHARD:-3600}
OUT=${OUT:-fuzz-out}
N=${SLURM_ARRAY_TASK_COUNT:?run as a job array (sbatch --array=0-N)}
I=${SLURM_ARRAY_TASK_ID:?run as a job array (sbatch --array=0-N)}
exec "$FUNMEM" fuzz --seed "$SEED" --passes "$PASSES" --time "$SECONDS_PER_SHARD" \
  --shard "$I/$N" --threads "${SLURM_CPUS_PER_TASK:-1}" --out "$OUT/shard-$I"
