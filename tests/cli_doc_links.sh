#!/usr/bin/env bash
# Every file a document points at is in the repository: each relative link of every
# tracked Markdown file names an existing file, and a link to a section names a heading
# of that file (tests/support/doc_links.py). Usage: cli_doc_links.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
if out=$(python3 "$src/tests/support/doc_links.py" "$src" 2>&1); then ok; else bad "broken links: $out"; fi
# the checker finds a broken link: a copy of a page with one added
mkdir -p "$tmp/tree/docs"
printf '# T\n\n## A section\n\n[ok](../README.md) [self](#a-section) [gone](missing.md) [no](#nowhere)\n' >"$tmp/tree/docs/t.md"
printf '# R\n' >"$tmp/tree/README.md"
out=$(cd "$tmp/tree" && python3 "$src/tests/support/doc_links.py" . 2>&1)
case $out in
  *"docs/t.md: link to missing.md: no such file"*"docs/t.md: link to #nowhere: no such section"*) ok ;;
  *) bad "the checker missed broken links: $out" ;;
esac
cli_finish
