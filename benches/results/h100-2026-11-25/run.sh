#!/usr/bin/env bash
# Issue 21's table on the H100: the seven Rodinia references and ours on the
# same data (bench-rodinia --funmem), then the benchmarks without a reference.
set -u
cd "$(dirname "$0")/.."
mkdir -p /etc/OpenCL/vendors; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/.device
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/r/gpu.txt 2>&1
R=${RUNS:-3}
export FUNMEM_BENCH_EXTRA="--timeout ${T:-25}" FUNMEM_RUN_TIMEOUT=${RT:-40}
date +%s > $OUT/r/t0
timeout ${TA:-400} bash scripts/bench-rodinia .device/rodinia --out $OUT/r --runs $R --funmem .device/funmem ${ONLY:+--only "$ONLY"} > $OUT/r/log-a.txt 2>&1
echo "part a rc=$? after $(( $(date +%s) - $(cat $OUT/r/t0) )) s"
rm -rf $OUT/r/build $OUT/r/data 2>/dev/null
b=".device/funmem bench --device nvidia --runs $R --timeout ${T:-25}"
{ timeout 50 $b benches/programs/sgemm.fun --dataset 992i64 --json $OUT/r/funmem-sgemm.json
  timeout 50 $b benches/programs/nbody.fun --dataset 100000i64 --json $OUT/r/funmem-nbody.json
  timeout 90 $b benches/programs/optionpricing.fun --dataset 8388608i64 --dataset 1048576i64 --dataset 131072i64 --json $OUT/r/funmem-optionpricing.json
} > $OUT/r/log-b.txt 2>&1
echo "part b after $(( $(date +%s) - $(cat $OUT/r/t0) )) s"
tail -c 3000 $OUT/r/log-a.txt; tail -c 2500 $OUT/r/log-b.txt
# Everything back in one file (the device returns a limited number of files).
cd $OUT && tar czf r.tgz r && rm -rf r && ls -la $OUT
