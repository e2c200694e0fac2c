#!/usr/bin/env python3
"""check_python_hpack.py — every raw-data story of hpack-test-case, encoded by our HPACK
encoder, must decode to its headers in python-hpack (Debian's python3-hpack), a decoder
this project did not write.

    check_python_hpack.py HPACK_ENCODE_STORIES

Runs the hpack_encode_stories program (built in tests/hpack/) on
$SPEEDY_SHARED_DIR/spec/h2/hpack-test-case/raw-data into a temporary directory, then feeds
every case's block, story by story on one decoder, to hpack.Decoder. Exit status: 0 all
decoded, 1 a mismatch or a refusal, 77 skipped (no python-hpack, or no stories).
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import hpack
except ImportError:
    print("check_python_hpack: python-hpack is not installed (apt-get install python3-hpack): skipped")
    sys.exit(77)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    shared = os.environ.get("SPEEDY_SHARED_DIR", os.path.join(os.path.dirname(__file__), "../../../shared"))
    raw = os.path.join(shared, "spec/h2/hpack-test-case/raw-data")
    if not os.path.isdir(raw):
        print(f"check_python_hpack: {raw} is absent: skipped")
        return 77
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([argv[1], raw, out], check=True)
        stories = sorted(f for f in os.listdir(out) if f.endswith(".json"))
        cases = 0
        octets = 0
        for name in stories:
            with open(os.path.join(out, name), encoding="utf-8") as f:
                story = json.load(f)
            decoder = hpack.Decoder()
            decoder.max_header_list_size = 1 << 30
            for case in story["cases"]:
                if "header_table_size" in case:
                    decoder.max_allowed_table_size = case["header_table_size"]
                block = bytes.fromhex(case["wire"])
                try:
                    got = decoder.decode(block, raw=True)
                except hpack.HPACKError as e:
                    print(f"check_python_hpack: {name} case {case['seqno']}: python-hpack refused "
                          f"our block {case['wire']}: {e!r}")
                    return 1
                want = [(k.encode(), v.encode()) for h in case["headers"] for k, v in h.items()]
                got = [(bytes(k), bytes(v)) for k, v in got]
                if got != want:
                    print(f"check_python_hpack: {name} case {case['seqno']}: decoded {got}, "
                          f"expected {want}")
                    return 1
                cases += 1
                octets += len(block)
    print(f"check_python_hpack: {len(stories)} stories, {cases} blocks ({octets} octets) "
          f"encoded by us decoded by python-hpack {hpack.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
