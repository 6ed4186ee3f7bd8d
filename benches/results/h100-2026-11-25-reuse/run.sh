#!/usr/bin/env bash
# Issue 23: the benchmark programs on the H100 through the GPU pipeline
# without reuse (simplify,coalesce,expand-gpu) and with it (the default,
# simplify,coalesce,reuse,expand-gpu), on the coalescing run's datasets.
set -u
cd "$(dirname "$0")/.."
mkdir -p /etc/OpenCL/vendors; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/.device
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/r/gpu.txt 2>&1
b=".device/funmem bench --device nvidia --timeout 30"
start=$(date +%s)
run() { # name dataset runs
  for v in before after; do
    if [ $v = before ]; then p="simplify,coalesce,expand-gpu"; else p="simplify,coalesce,reuse,expand-gpu"; fi
    timeout ${4:-120} $b benches/programs/$1.fun --dataset "$2" --runs $3 --passes $p --json $OUT/r/$1-$v.json > $OUT/r/$1-$v.txt 2>&1
    echo "$1 $v rc=$? t=$(( $(date +%s) - start ))s"; tail -3 $OUT/r/$1-$v.txt
  done
  (cd $OUT && tar cf reuse23.tar r)
}
run hotspot 1024i64 10
run srad 502i64 10
run backprop 1048576i64 10
run pathfinder 100000i64 10
run nw 2049i64 5
run sgemm 1024i64 10
run lud 2048i64 3
if [ $(( $(date +%s) - start )) -lt 380 ]; then run nbody 100000i64 5 60; fi
if [ $(( $(date +%s) - start )) -lt 450 ]; then run optionpricing 1048576i64 3 60; fi
cd $OUT && tar cf reuse23.tar r && rm -rf r && ls -la $OUT
