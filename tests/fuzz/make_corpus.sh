#!/usr/bin/env bash
# Regenerates the committed seed corpora (corpus/<target>/) from the readable seeds
# (seeds/) and the built-in templates. Run after editing a seed; commit both.
#   problem_key: one file per line of seeds/problem_keys.txt
#   knob_space:  "<problem key>\n<template>" for every strategies/templates/*.mlir
#                (with a problem of each family it tunes) plus seeds/knob_space/*.txt
#   rpc:         seeds/rpc/*.textproto encoded as mtune.fuzz.Session (protoc --encode)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=$here/corpus

rm -rf "$corpus/problem_key" "$corpus/knob_space" "$corpus/rpc"
mkdir -p "$corpus/problem_key" "$corpus/knob_space" "$corpus/rpc"

i=0
while IFS= read -r line; do
  printf '%s' "$line" > "$corpus/problem_key/$(printf 'seed-%02d' "$i")"
  i=$((i + 1))
done < "$here/seeds/problem_keys.txt"

template_problem() {
  case "$1" in
    matmul_*) echo "matmul:m=96,n=80,k=64:f32" ;;
    conv_1d_*) echo "conv_1d_nwc_wcf:n=1,w=34,c=8,kw=3,f=16,sw=1,dw=1:f32" ;;
    conv_2d_*) echo "conv_2d_nhwc_hwcf:n=1,h=10,w=10,c=8,kh=3,kw=3,f=16,sh=1,sw=1,dh=1,dw=1:f32" ;;
    depthwise_1d_*) echo "depthwise_conv_1d_nwc_wc:n=1,w=34,c=16,kw=3,sw=1,dw=1:f32" ;;
    depthwise_2d_*) echo "depthwise_conv_2d_nhwc_hwc:n=1,h=10,w=10,c=16,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32" ;;
    copy_*) echo "transpose_2d:m=100,n=37:f32" ;;
    reduce_*) echo "reduce_rows_2d:m=100,n=37:f32" ;;
    *) echo "unknown template family: $1" >&2; exit 1 ;;
  esac
}
for template in "$root"/strategies/templates/*.mlir; do
  name=$(basename "$template" .mlir)
  { template_problem "$name"; cat "$template"; } > "$corpus/knob_space/template-$name"
done
for seed in "$here"/seeds/knob_space/*.txt; do
  cp "$seed" "$corpus/knob_space/$(basename "$seed" .txt)"
done

for seed in "$here"/seeds/rpc/*.textproto; do
  protoc --proto_path="$here" --proto_path="$root/proto" --encode=mtune.fuzz.Session \
    rpc_session.proto < "$seed" > "$corpus/rpc/$(basename "$seed" .textproto)"
done
echo "make_corpus.sh: $(ls "$corpus/problem_key" | wc -l) problem_key, $(ls "$corpus/knob_space" | wc -l) knob_space, $(ls "$corpus/rpc" | wc -l) rpc seeds"
