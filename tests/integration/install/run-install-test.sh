#!/usr/bin/env bash
# run-install-test.sh — CTest test integration.install: libspeedy installs and is usable.
#
# Installs the build tree into a temporary prefix with `cmake --install`, then checks what
# a user of the installed library depends on:
#   (a) a program built with `pkg-config --cflags --libs libspeedy` links and runs
#   (b) the same program linked statically with `pkg-config --static` (when libspeedy.a is
#       installed) needs no libspeedy.so
#   (c) a CMake project using find_package(libspeedy) and libspeedy::speedy builds and runs
#   (d) the shared library exports exactly the SPEEDY_API functions of speedy.h, has SONAME
#       libspeedy.so.0 and needs nothing but zlib and libc
#   (e) libspeedy.pc has Requires.private: zlib
#   (f) the header compiles and links as C++ (extern "C"), when a C++ compiler is found
#   (g) with the programs: `make install PREFIX=...` is this `cmake --install`; it installs
#       every docs/*.1 and docs/*.8 of the source tree, among them every page `speedy
#       --help` names; each page names every option its command's --help lists (and each
#       of `speedy lab`'s subcommands'); `man -l` (or groff) renders each without a warning
# Temporary files are removed on exit, whatever happens.
#
# Usage: run-install-test.sh BUILD_DIR C_COMPILER SANITIZE(ON|OFF) [COMPILE_OPTIONS...]
#   COMPILE_OPTIONS are the project-wide compile options (sanitizer flags, for example);
#   consumers are compiled and linked with them so they match the installed library.
set -euo pipefail

if (($# < 3)); then
  echo "usage: $0 BUILD_DIR C_COMPILER SANITIZE [COMPILE_OPTIONS...]" >&2
  exit 2
fi
build_dir="$1"
cc="$2"
sanitize="$3"
shift 3
flags=("$@")
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

work="$(mktemp -d "${TMPDIR:-/tmp}/speedy-install-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

step() { echo "install-test: $*"; }
# words TEXT: the lines of TEXT on one line.
words() { tr '\n' ' ' <<<"$1" | sed 's/ *$//'; }
fail() {
  echo "install-test: FAIL: $*" >&2
  exit 1
}

# --- install --------------------------------------------------------------------------
step "cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "cmake --install failed"; }

header="$prefix/include/speedy/speedy.h"
[[ -f "$header" ]] || fail "speedy/speedy.h not installed under $prefix/include"
pc_file="$(find "$prefix" -name libspeedy.pc -print -quit)"
[[ -n "$pc_file" ]] || fail "libspeedy.pc not installed"
libdir="$(dirname "$(dirname "$pc_file")")"
[[ -f "$libdir/libspeedy.so" ]] ||
  fail "libspeedy.so not installed next to the pkg-config directory ($libdir)"
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

# check_resolves BINARY: the dynamic loader takes libspeedy from our prefix.
check_resolves() {
  local resolved
  resolved="$(ldd "$1" | awk '$1 ~ /^libspeedy\.so/ { print $3 }')"
  [[ "$resolved" == "$libdir"/* ]] ||
    fail "$1 loads libspeedy from '${resolved:-nowhere}', not from $libdir"
}

# --- (e) the pkg-config file ------------------------------------------------------------
step "(e) libspeedy.pc: Requires.private and paths"
requires_private="$(pkg-config --print-requires-private libspeedy)"
[[ "$requires_private" == "zlib" ]] ||
  fail "libspeedy.pc Requires.private is '$requires_private', expected 'zlib'"
cflags="$(pkg-config --cflags libspeedy)"
libs="$(pkg-config --libs libspeedy)"
# A relocated install must point into its own prefix, not where the build was configured.
# pkg_dir FLAG WORDS: the directory named by the first FLAG word, resolved ("" if none).
pkg_dir() {
  local word
  for word in $2; do
    if [[ "$word" == "$1"* ]]; then
      realpath -m "${word#"$1"}"
      return
    fi
  done
}
[[ "$(pkg_dir -L "$libs")" == "$(realpath "$libdir")" ]] ||
  fail "pkg-config --libs libspeedy gives '$libs', not -L$libdir (is libspeedy.pc relocatable?)"
[[ "$(pkg_dir -I "$cflags")" == "$(realpath "$prefix/include")" ]] ||
  fail "pkg-config --cflags libspeedy gives '$cflags', not -I$prefix/include"

# --- (a) pkg-config, shared -------------------------------------------------------------
step "(a) pkg-config --cflags --libs libspeedy: $cflags $libs"
# shellcheck disable=SC2086 # pkg-config output is a list of words
"$cc" "${flags[@]}" -o "$work/consumer-pc" "$here/consumer/consumer.c" $cflags $libs ||
  fail "consumer does not build with pkg-config"
LD_LIBRARY_PATH="$libdir" check_resolves "$work/consumer-pc"
LD_LIBRARY_PATH="$libdir" "$work/consumer-pc" || fail "consumer built with pkg-config failed"

# --- (b) pkg-config --static ------------------------------------------------------------
if [[ -f "$libdir/libspeedy.a" ]]; then
  static_libs=()
  for word in $(pkg-config --static --libs libspeedy); do
    if [[ "$word" == -lspeedy ]]; then static_libs+=("$libdir/libspeedy.a"); else static_libs+=("$word"); fi
  done
  step "(b) static link: ${static_libs[*]}"
  # shellcheck disable=SC2086
  "$cc" "${flags[@]}" -o "$work/consumer-static" "$here/consumer/consumer.c" $cflags \
    "${static_libs[@]}" || fail "consumer does not link statically with pkg-config --static"
  if ldd "$work/consumer-static" | grep -q libspeedy; then
    fail "statically linked consumer still needs libspeedy.so"
  fi
  "$work/consumer-static" || fail "statically linked consumer failed"
else
  step "(b) skipped: no libspeedy.a installed (SPEEDY_BUILD_STATIC=OFF)"
fi

# --- (c) find_package(libspeedy) ----------------------------------------------------------
step "(c) CMake consumer: find_package(libspeedy), libspeedy::speedy"
version="$(pkg-config --modversion libspeedy)"
cmake -S "$here/consumer" -B "$work/consumer-cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${flags[*]}" \
  -DCMAKE_EXE_LINKER_FLAGS="${flags[*]}" -DEXPECTED_VERSION="$version" \
  >"$work/cmake-consumer.log" 2>&1 ||
  { cat "$work/cmake-consumer.log" >&2; fail "CMake consumer does not configure"; }
cmake --build "$work/consumer-cmake" >>"$work/cmake-consumer.log" 2>&1 ||
  { cat "$work/cmake-consumer.log" >&2; fail "CMake consumer does not build"; }
check_resolves "$work/consumer-cmake/consumer"
"$work/consumer-cmake/consumer" || fail "CMake consumer failed"

# --- (d) the shared library's ABI surface -----------------------------------------------
step "(d) exported symbols, SONAME, dependencies of libspeedy.so"
so="$(realpath "$libdir/libspeedy.so")"
soname="$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[[ "$soname" == "libspeedy.so.0" ]] || fail "SONAME is '$soname', expected libspeedy.so.0"
[[ -e "$libdir/libspeedy.so.0" ]] || fail "no libspeedy.so.0 link in $libdir"

# The public API: every SPEEDY_API function named in the installed header.
grep -oE '^SPEEDY_API[^(]*\bspeedy_[a-z0-9_]+\(' "$header" | grep -oE 'speedy_[a-z0-9_]+\($' |
  tr -d '(' | sort -u >"$work/api.txt"
[[ -s "$work/api.txt" ]] || fail "found no SPEEDY_API functions in $header"
# Defined dynamic symbols, without version nodes (type A) and, in sanitizer builds, the
# instrumentation's own symbols.
instrumentation='^$'
[[ "$sanitize" == ON ]] && instrumentation='^__(asan|odr_asan|ubsan|sanitizer|lsan)'
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' |
  { grep -vE "$instrumentation" || true; } | sort -u >"$work/exported.txt"
# Internal modules' prefixes (public names never begin with spdy_, so compare against the API).
internals="$(grep -E '^(spdy_|speedy_(mem|buf)_)' "$work/exported.txt" |
  grep -vxFf "$work/api.txt" || true)"
[[ -z "$internals" ]] || fail "internal functions exported: $(words "$internals")"
extra="$(comm -13 "$work/api.txt" "$work/exported.txt")"
[[ -z "$extra" ]] || fail "exported but not declared SPEEDY_API in speedy.h: $(words "$extra")"
missing="$(comm -23 "$work/api.txt" "$work/exported.txt")"
[[ -z "$missing" ]] || fail "declared SPEEDY_API in speedy.h but not exported: $(words "$missing")"
needed="$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)"
while read -r lib; do
  case "$lib" in
  libz.so.* | libc.so.* | ld-linux*) ;;
  libasan.so.* | libubsan.so.* | libclang_rt.*) [[ "$sanitize" == ON ]] || fail "libspeedy.so needs $lib" ;;
  *) fail "libspeedy.so needs $lib; it may depend on nothing but zlib" ;;
  esac
done <<<"$needed"
step "(d) $(wc -l <"$work/exported.txt") exported functions, all in speedy.h; SONAME $soname;" \
  "needs $(words "$needed")"

# --- (f) C++ ------------------------------------------------------------------------------
case "$(basename "$cc")" in
*clang*) cxx="${cc/clang/clang++}" ;;
*gcc*) cxx="${cc/gcc/g++}" ;;
*) cxx="c++" ;;
esac
if command -v "$cxx" >/dev/null 2>&1; then
  step "(f) consumer as C++ with $cxx"
  # shellcheck disable=SC2086
  "$cxx" "${flags[@]}" -x c++ -o "$work/consumer-cxx" "$here/consumer/consumer.c" -x none \
    $cflags $libs || fail "speedy.h does not compile or link as C++"
  LD_LIBRARY_PATH="$libdir" "$work/consumer-cxx" || fail "C++ consumer failed"
else
  step "(f) skipped: no C++ compiler ($cxx) found"
fi

# --- (g) the manual pages -----------------------------------------------------------------
src_dir="$(sed -n 's/^speedy_SOURCE_DIR:STATIC=//p' "$build_dir/CMakeCache.txt")"
speedy="$prefix/bin/speedy"
if [[ ! -x "$speedy" ]]; then
  step "(g) skipped: the programs are not built (SPEEDY_LIB_ONLY=ON)"
else
  step "(g) manual pages: installed by make install, named by speedy --help, every option, rendered"
  # `make install PREFIX=P` runs what this test ran (after building, which ctest's build did).
  recipe="$(make -n -s -C "$src_dir" install PREFIX="$prefix" BUILD_DIR="$build_dir" 2>&1 |
    grep -F 'cmake --install' || true)"
  [[ "$recipe" == "cmake --install $build_dir --prefix \"$prefix\"" ]] ||
    fail "make install PREFIX=... does not run 'cmake --install BUILD --prefix PREFIX': '$recipe'"
  mandir="$prefix/share/man"
  pages=()
  for page in "$src_dir"/docs/*.1 "$src_dir"/docs/*.8; do
    [[ -e "$page" ]] || continue
    name="$(basename "$page")"
    installed="$mandir/man${name##*.}/$name"
    cmp -s "$page" "$installed" || fail "docs/$name is not installed as $installed"
    pages+=("$installed")
  done
  ((${#pages[@]} > 0)) || fail "no manual page found in $src_dir/docs"
  help="$("$speedy" --help)"
  for ref in $(grep -oE '\b[a-z][a-z-]*\([18]\)' <<<"$help"); do
    name="${ref%(*}" section="${ref//[^0-9]/}"
    [[ -f "$mandir/man$section/$name.$section" ]] ||
      fail "speedy --help names $ref, which is not installed ($mandir/man$section/$name.$section)"
  done

  # commands HELP: the first word of each line of the "Commands:" or "Subcommands:" list.
  commands() { awk '/^(Sub)?[Cc]ommands:$/ { on = 1; next } on && NF == 0 { on = 0 } on { print $1 }' <<<"$1"; }
  # options_in PAGE COMMAND...: every option COMMAND --help lists is in PAGE (as \-\-name).
  options_in() {
    local page="$1" option missing=()
    shift
    for option in $("$@" --help | grep -oE '(^|[ ,[])--?[a-zA-Z][a-zA-Z0-9-]*' |
      sed 's/^[ ,[]//' | sort -u); do
      grep -qF -- "${option//-/\\-}" "$page" || missing+=("$option")
    done
    ((${#missing[@]} == 0)) || fail "$(basename "$page") lacks what '$* --help' lists: ${missing[*]}"
  }
  options_in "$mandir/man1/speedy.1" "$speedy"
  for command in $(commands "$help"); do
    page="$mandir/man1/speedy-$command.1"
    [[ -f "$page" ]] || continue # named by --help: checked above
    options_in "$page" "$speedy" "$command"
    for sub in $(commands "$("$speedy" "$command" --help)"); do
      options_in "$page" "$speedy" "$command" "$sub"
    done
  done
  if [[ -x "$prefix/sbin/speedyd" ]]; then
    options_in "$mandir/man8/speedyd.8" "$prefix/sbin/speedyd"
  else
    fail "speedyd is not installed in $prefix/sbin"
  fi

  # Rendered as man(1) does, with groff's warnings on: none may come.
  for page in "${pages[@]}"; do
    if command -v man >/dev/null; then
      LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$page" >"$work/page.txt" 2>"$work/page.err" ||
        fail "man -l $(basename "$page") failed: $(head -c 300 "$work/page.err")"
    elif command -v groff >/dev/null; then
      groff -k -man -Tutf8 -ww "$page" >"$work/page.txt" 2>"$work/page.err" ||
        fail "groff $(basename "$page") failed: $(head -c 300 "$work/page.err")"
    else
      step "(g) note: neither man nor groff found: the pages are not rendered"
      break
    fi
    [[ ! -s "$work/page.err" ]] || fail "$(basename "$page") renders with warnings: $(head -c 300 "$work/page.err")"
    grep -q "^NAME" "$work/page.txt" || fail "$(basename "$page") renders without a NAME section"
  done
  step "(g) ${#pages[@]} pages installed and rendered: $(words "$(basename -a "${pages[@]}")")"
fi

step "all checks passed"
