#!/bin/bash
# run.sh SPEEDYD SPEEDY WORK CASE... — the entry point of every strict-peer CTest case:
# skips (exit 77) when /usr/bin/python3 is missing, otherwise runs run_case.py, which
# skips when the build artefact or tool its case needs is missing.
if [ ! -x /usr/bin/python3 ]; then
  echo "SKIP: /usr/bin/python3 is not installed (the strict SPDY peer is a Python script)"
  exit 77
fi
exec /usr/bin/python3 "$(dirname "$0")/run_case.py" "$@"
