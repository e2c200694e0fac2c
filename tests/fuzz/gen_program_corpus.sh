#!/usr/bin/env bash
# gen_program_corpus.sh — writes the seed corpora of the program harnesses (docs/fuzzing.md):
#
#   tests/fuzz/gen_program_corpus.sh SPEEDY [CORPUS_DIR]
#
# SPEEDY is a built `speedy` binary (e.g. build/src/speedy); CORPUS_DIR defaults to
# tests/fuzz/corpus. Writes CORPUS_DIR/http1/ (HTTP/1.1 requests behind the harness's
# three-byte header: configuration byte, 16-bit cut position), CORPUS_DIR/manifest/ (push
# manifests) and CORPUS_DIR/plan/ (plans made by `speedy lab plan` from the HARs of
# CORPUS_DIR/har/). The HARs themselves are small synthetic files written by hand and
# committed as they are (never copies of real recordings).
set -euo pipefail

if (($# < 1 || $# > 2)); then
  echo "usage: $0 SPEEDY [CORPUS_DIR]" >&2
  exit 2
fi
speedy=$1
corpus=${2:-$(dirname "$0")/corpus}
if [[ ! -x $speedy ]]; then
  echo "$0: $speedy is not an executable" >&2
  exit 2
fi

# ---- http1: config byte (bits 0-1: header budget), cut position (2 bytes), request bytes
mkdir -p "$corpus/http1"
rm -f "$corpus"/http1/*
# seed NAME CONFIG CUT BYTES (BYTES with backslash escapes: \r\n)
seed() {
  local cut=$3
  { printf '%b' "\\x$(printf %02x "$2")\\x$(printf %02x $((cut >> 8)))\\x$(printf %02x $((cut & 255)))"
    printf "%b" "$4"; } >"$corpus/http1/$1"
}
seed get-simple 0 10 'GET /index.html HTTP/1.1\r\nHost: example.test\r\nUser-Agent: seed\r\nAccept: */*\r\n\r\n'
seed pipelined-three 0 40 'GET / HTTP/1.1\r\nHost: a.test\r\n\r\nHEAD /a.css HTTP/1.1\r\nHost: a.test\r\nAccept-Encoding: gzip;q=1.0, identity; q=0.5, *;q=0\r\n\r\nGET /big.bin HTTP/1.1\r\nHost: a.test\r\nRange: bytes=100-199\r\nConnection: close\r\n\r\n'
seed chunked-post 0 70 'POST /upload/x HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nTrailer-Field: 1\r\n\r\nGET /after HTTP/1.1\r\nHost: a.test\r\n\r\n'
seed http10-keepalive-body 0 30 'POST /form HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 11\r\n\r\nhello worldGET /next HTTP/1.0\r\n\r\n'
seed ranges 0 5 'GET /f HTTP/1.1\r\nHost: a.test\r\nRange: bytes=-500\r\n\r\nGET /f HTTP/1.1\r\nHost: a.test\r\nRange: bytes=100-\r\n\r\nGET /f HTTP/1.1\r\nHost: a.test\r\nRange: bytes=0-0,5-9\r\n\r\nGET /f HTTP/1.1\r\nHost: a.test\r\nRange: bytes = 18446744073709551616-\r\n\r\n'
seed conditional-dates 0 90 'GET /f HTTP/1.1\r\nHost: a.test\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\nIf-None-Match: W/"5-1a2b3c-7", "x"\r\n\r\nGET /g HTTP/1.1\r\nHost: a.test\r\nIf-Unmodified-Since: Sunday, 06-Nov-94 08:49:37 GMT\r\nIf-Range: Sun Nov  6 08:49:37 1994\r\nRange: bytes=0-9\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n'
seed paths 0 20 'GET /a%20b/c%2e.txt?q=%2F HTTP/1.1\r\nHost: a.test\r\n\r\nGET /x/../y HTTP/1.1\r\nHost: a.test\r\n\r\nGET /.hidden/ HTTP/1.1\r\nHost: a.test\r\n\r\nGET //etc/passwd HTTP/1.1\r\nHost: a.test\r\n\r\nGET /dir/ HTTP/1.1\r\nHost: a.test\r\n\r\n'
seed absolute-form-cookies 0 15 'GET http://other.test:8080/p?x=1 HTTP/1.1\r\nHost: a.test\r\nCookie: a=1\r\nCookie: b=2\r\n\r\n'
seed small-budget-431 1 50 'GET / HTTP/1.1\r\nHost: a.test\r\nX-One: 0123456789012345678901234567890123456789\r\nX-Two: 0123456789012345678901234567890123456789\r\nX-Three: 0123456789012345678901234567890123456789\r\nX-Four: 0123456789012345678901234567890123456789\r\nX-Five: 0123456789012345678901234567890123456789\r\nX-Six: 0123456789012345678901234567890123456789\r\n\r\n'
seed obs-fold-400 2 33 'GET / HTTP/1.1\r\nHost: a.test\r\nX-Folded: a\r\n b\r\n\r\n'
seed space-before-colon-400 3 20 'GET / HTTP/1.1\r\nHost : a.test\r\n\r\n'
seed smuggling-cl-te 0 44 'POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
seed expect-continue 0 60 'PUT /upload/y HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc'
seed no-host-400 0 3 'GET / HTTP/1.1\r\nAccept: */*\r\n\r\n'
seed options-star 0 8 'OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\nDELETE /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\n\r\n'

# ---- manifest: push manifests (docs/push-manifest.md)
mkdir -p "$corpus/manifest"
rm -f "$corpus"/manifest/*
printf '# PAGE RESOURCE [URGENCY]\n/               /css/site.css       0\n/               /js/app.js          2\n/               /img/logo.png           # urgency defaults to 3\n/about.html     /css/site.css       0\n\n' \
  >"$corpus/manifest/documented-example"
printf '/index.html\t/a.css\t1\r\n/index.html\t/b.js?v=3\t7\r\n/p/2.html /fonts/x.woff2\r\n/p/2.html /data.json 4\r\n# comment\r\n' \
  >"$corpus/manifest/crlf-tabs-queries"
printf '/ /a.css 0\n/ /a.css 1\n' >"$corpus/manifest/duplicate-refused"
printf '/ //other.test/a.css\n' >"$corpus/manifest/network-path-refused"
printf '/a /b/../c 9\n' >"$corpus/manifest/dot-segment-and-urgency-refused"

# ---- plan: what `speedy lab plan` writes for the seed HARs (both graphs, every page)
mkdir -p "$corpus/plan"
rm -f "$corpus"/plan/*
for har in "$corpus"/har/*.har; do
  base=$(basename "$har" .har)
  "$speedy" lab plan --all-pages --dir "$corpus/plan" "$har" 2>/dev/null || true
  "$speedy" lab plan --graph flat --seed 7 -o "$corpus/plan/$base-flat.json" "$har" 2>/dev/null ||
    rm -f "$corpus/plan/$base-flat.json"
done
echo "$0: wrote $(find "$corpus"/{http1,manifest,plan} -type f | wc -l) seeds under $corpus"
