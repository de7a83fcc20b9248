#!/bin/bash
# crossner-to-conll.sh — the CrossNER training file of the prose PERSON tagger
# (redactor/README.md, "PERSON tagger").
#
#   redactor/crossner-to-conll.sh CROSSNER_DIR > crossner.conll
#
# CROSSNER_DIR: ner_data/ of github.com/zliucr/CrossNER (Liu et al., AAAI 2021; MIT), with
#   the directories ai, literature, music, politics, science and their train.txt, dev.txt,
#   test.txt (token TAB BIO-tag, a blank line between sentences).
# Writes the 15 files in that order as one CoNLL file: the tags of people (person, writer,
# politician, scientist, musicalartist, researcher) become PER, "misc" becomes O (it mixes
# nationalities, events and titles), every other entity type ORG (the trainer's tag X: a
# named entity that is no person).
# Exit status: 0, or 2 on a missing file.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 CROSSNER_DIR > crossner.conll" >&2
  exit 2
fi
for d in ai literature music politics science; do
  for s in train dev test; do
    f=$1/$d/$s.txt
    [ -r "$f" ] || { echo "$0: $f: not readable" >&2; exit 2; }
    cat "$f"
  done
done | awk -F'\t' 'NF < 2 { print; next }
  { t = $2
    if (t != "O") {
      p = substr (t, 1, 2); l = substr (t, 3)
      if (l ~ /^(person|writer|politician|scientist|musicalartist|researcher)$/) t = p "PER"
      else if (l == "misc") t = "O"
      else t = p "ORG"
    }
    print $1 "\t" t }'
