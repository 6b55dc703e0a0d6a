#!/bin/sh
# Fetches the public attack set the local classifier can be trained on in
# addition to guard/testdata/train, at a pinned commit, and writes it as a
# training file ("category | passage" lines, "⏎" for a line break):
#
#   scripts/fetch-training-attacks.sh DIR
#   go run ./guard/internal/textmodel/cmd/trainmodel guard/testdata/train DIR model.bin
#
# Source: HumanCompatibleAI/tensor-trust-data (the Tensor Trust game's
# hijacking benchmark, 775 attacks written by players). Its repository
# states no licence, so nothing of it is committed here; the extraction
# benchmark of the same repository (569 attacks) is written to
# DIR/heldout/ for evaluation only and is never trained on.
set -eu
dir=${1:?usage: fetch-training-attacks.sh DIR}
commit=e2385ea9cf448c9641b96e2e39f113ed4979a5b0
mkdir -p "$dir/heldout"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone --quiet --filter=blob:limit=5m https://github.com/HumanCompatibleAI/tensor-trust-data "$tmp/tt"
git -C "$tmp/tt" checkout --quiet "$commit"
conv() {
	# one attack per line; line breaks as ⏎, runs of blanks folded; attacks
	# shorter than 20 characters or without a letter are dropped.
	jq -r --arg cat "$2" '.attack | gsub("\r"; "") | gsub("[ \t]+"; " ") | gsub("\n+"; "⏎") | select(length >= 20) | select(test("[[:alpha:]]")) | $cat + " | " + .' "$1"
}
{
	echo "# Tensor Trust hijacking-robustness v1, HumanCompatibleAI/tensor-trust-data@$commit"
	conv "$tmp/tt/benchmarks/hijacking-robustness/v1/hijacking_robustness_dataset.jsonl" override | LC_ALL=C sort -u
} >"$dir/attacks-tensortrust-hijacking.txt"
{
	echo "# Tensor Trust extraction-robustness v1, HumanCompatibleAI/tensor-trust-data@$commit (held out)"
	conv "$tmp/tt/benchmarks/extraction-robustness/v1/extraction_robustness_dataset.jsonl" exfiltration | LC_ALL=C sort -u
} >"$dir/heldout/attacks-tensortrust-extraction.txt"
wc -l "$dir"/attacks-*.txt "$dir"/heldout/*.txt
