#!/bin/bash
# cv-person-tagger.sh — out-of-sample PERSON scores of the developer files that the shipped
# PERSON tagger is trained on (redactor/README.md, "PERSON tagger").
#
#   redactor/cv-person-tagger.sh BUILD_DIR EVAL_DIR TRAIN_DIR [TRAINER OPTION...]
#
# BUILD_DIR: a meson build of this project (redactor/train-person-tagger, tools/hanzo).
# EVAL_DIR: ../shared/redactor-eval (wnut17_dev.jsonl, wikigold_first60.jsonl).
# TRAIN_DIR: wnut17train.conll and the Broad Twitter Corpus sections a b e f g h .conll
#   (sources in redactor/README.md), and crossner.conll (redactor/crossner-to-conll.sh) for
#   the prose tagger.
# TRAINER OPTION: passed to train-person-tagger after the shipped settings (e.g. --prose-bias 12).
#
# Each developer file is cut into 4 contiguous parts (whole documents stay together, except
# at the cuts). In fold k both taggers are trained, with the shipped commands' settings, on
# the training files (the prose tagger also on crossner.conll) plus parts other than k of
# both developer files, and the whole redactor is scored on part k (hanzo redact --eval,
# PERSON, IoU >= 0.9). The counts are summed over the folds and printed per file with
# precision, recall and F2. Takes about a minute.
# Exit status: 0, or 2 on bad arguments or missing files.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BUILD_DIR EVAL_DIR TRAIN_DIR [TRAINER OPTION...]" >&2
  exit 2
fi
build=$1 evald=$2 traind=$3
shift 3
train=(wnut17train.conll a.conll b.conll e.conll f.conll g.conll h.conll)
for f in "${train[@]}" crossner.conll; do
  [ -r "$traind/$f" ] || { echo "$0: $traind/$f: not readable" >&2; exit 2; }
done
devs=(wnut17_dev wikigold_first60)
for d in "${devs[@]}"; do
  [ -r "$evald/$d.jsonl" ] || { echo "$0: $evald/$d.jsonl: not readable" >&2; exit 2; }
done
# the settings of the shipped weights (README.md, "Regenerate"); options given after them win
shipped=(--holdout 0 --fixed-epochs 10 --o-bias -24 --veto 3 --veto-margin 100 --seeds 5)
# ... and the prose tagger's: a wider veto margin
prose=(--veto-margin 200)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
folds=4
for k in $(seq 0 $((folds - 1))); do
  rest=()
  for d in "${devs[@]}"; do
    n=$(wc -l < "$evald/$d.jsonl")
    a=$((n * k / folds + 1)) b=$((n * (k + 1) / folds))
    sed -n "${a},${b}p" "$evald/$d.jsonl" > "$tmp/$d.part$k.jsonl"
    sed "${a},${b}d" "$evald/$d.jsonl" > "$tmp/$d.rest$k.jsonl"
    rest+=("$tmp/$d.rest$k.jsonl")
  done
  HZ_REDACT_PERSON_TAGGER=none "$build/redactor/train-person-tagger" "${shipped[@]}" "$@" -o "$tmp/fold$k.bin" \
    "${train[@]/#/$traind/}" "${rest[@]}" > "$tmp/train$k.log"
  HZ_REDACT_PERSON_TAGGER=none "$build/redactor/train-person-tagger" "${shipped[@]}" "${prose[@]}" "$@" -o "$tmp/prose$k.bin" \
    "${train[@]/#/$traind/}" "$traind/crossner.conll" "${rest[@]}" > "$tmp/train-prose$k.log"
  for d in "${devs[@]}"; do
    HZ_REDACT_PERSON_TAGGER="$tmp/fold$k.bin" HZ_REDACT_PROSE_TAGGER="$tmp/prose$k.bin" \
      "$build/tools/hanzo" redact --eval "$tmp/$d.part$k.jsonl" \
      | awk -F'|' -v d="$d" '$2 ~ /^ PERSON / { gsub (/ /, ""); print d, $3, $4, $9, $10 }' >> "$tmp/counts"
  done
done
echo "| file | gold | predicted | P | R | F2 |"
echo "|---|---:|---:|---:|---:|---:|"
awk -v nf="$folds" '{ g[$1] += $2; p[$1] += $3; tp[$1] += $4 * $3; tr[$1] += $5 * $2 }
     END { for (d in g) { P = p[d] ? tp[d] / p[d] : 0; R = g[d] ? tr[d] / g[d] : 0;
                          F = P + R ? 5 * P * R / (4 * P + R) : 0;
                          printf "| %s (%d-fold) | %d | %d | %.3f | %.3f | %.3f |\n", d, nf, g[d], p[d], P, R, F } }' \
  "$tmp/counts" | sort
