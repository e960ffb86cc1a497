# Sourced by the GPU scripts: pipeline WITH_CHANGE prints the default
# pipeline with one pass's options set (`insert-proxy-fences{space=all}`
# replaces insert-proxy-fences), the form kir-bench --compare and kir-run
# --pipeline take. The pass list is passes/pipeline.cc's default.
pipeline() {
  local p="canonicalize,serialize-split-k,circular-buffer,uniform-predicates,insert-async-waits,plan-shared-memory,insert-syncs,insert-proxy-fences,dce"
  local pass=${1%%\{*}
  echo "${p/$pass/$1}"
}
